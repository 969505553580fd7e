// Wrong (R2): unmaps at once, without waiting for the streams
//
// A kernel queued before the trim may still be running in a freed block whose memory is unmapped under it.
#include "exercises.hpp"

#include <vector>

namespace ex30 {

// A run stays when a live block [ptr, ptr + size) overlaps it by one byte or more. cuMemUnmap does
// not wait for the streams, so the device is waited for first: a freed block's last kernel may still
// be running in the memory about to go.
size_t trim(Segment& seg, const std::vector<std::pair<CUdeviceptr, size_t>>& live) {
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
