// Reference solution of lesson 30's exercise trim-idle (lessons/30-caching-allocator/exercises.cpp).
#include "exercises.hpp"

#include <vector>

namespace ex30 {

// A run stays when a live block [ptr, ptr + size) overlaps it by one byte or more. cuMemUnmap does
// not wait for the streams, so the device is waited for first: a freed block's last kernel may still
// be running in the memory about to go.
size_t trim(Segment& seg, const std::vector<std::pair<CUdeviceptr, size_t>>& live) {
  CU_CHECK(cuCtxSynchronize());
  size_t released = 0;
  for (auto it = seg.runs.begin(); it != seg.runs.end();) {
    const CUdeviceptr from = seg.base + it->first * seg.granule, to = from + it->second * seg.granule;
    bool touched = false;
    for (const auto& [p, size] : live) touched = touched || (p < to && p + size > from);
    if (touched) {
      ++it;
      continue;
    }
    CU_CHECK(cuMemUnmap(from, to - from));
    released += to - from;
    it = seg.runs.erase(it);
  }
  return released;
}

}  // namespace ex30
