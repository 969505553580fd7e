// Wrong (R3): unmaps the run but leaves it in seg.runs
//
// The segment believes the granules are mapped: the next block there is handed out with no memory behind it, and the destructor unmaps twice.
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
    ++it;
  }
  return released;
}

}  // namespace ex30
