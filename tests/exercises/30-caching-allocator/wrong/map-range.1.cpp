// Wrong (R1): rounds the end of the range down: the granule holding its last byte is left out
//
// A block whose end is not on a granule boundary gets memory for all but its last part: mapRange(seg, 0, 1) maps nothing.
#include "exercises.hpp"

#include <stdexcept>
#include <string>
#include <vector>

namespace ex30 {

namespace {

bool isMapped(const Segment& seg, size_t g) {
  auto it = seg.runs.upper_bound(g);
  if (it == seg.runs.begin()) return false;
  --it;
  return g < it->first + it->second;
}

// One stretch of missing granules: one cuMemCreate, mapped, released (the mapping owns it), granted
// read-write. On failure nothing of it is left held, and it throws.
void mapStretch(Segment& seg, size_t first, size_t count) {
  const CUmemAllocationProp prop = seg.prop();
  const CUdeviceptr at = seg.base + first * seg.granule;
  const size_t bytes = count * seg.granule;
  CUmemGenericAllocationHandle handle = 0;
  CU_CHECK(cuMemCreate(&handle, bytes, &prop, 0));
  CUresult rc = cuMemMap(at, bytes, 0, handle, 0);
  cuMemRelease(handle);  // mapped: the mapping keeps it; not mapped: this frees it
  CU_CHECK(rc);
  CUmemAccessDesc access{};
  access.location = prop.location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  rc = cuMemSetAccess(at, bytes, &access, 1);
  if (rc != CUDA_SUCCESS) cuMemUnmap(at, bytes);
  CU_CHECK(rc);
}

}  // namespace

// The granules the range touches, from the one holding its first byte to the one holding its last;
// each stretch of those no run maps becomes one run. Runs mapped by this call are undone if a later
// stretch fails, so a failure leaves the segment as it was.
size_t mapRange(Segment& seg, size_t offset, size_t bytes) {
  if (bytes == 0) return 0;
  if (offset > seg.capacity || bytes > seg.capacity - offset)
    throw std::length_error("mapRange: [" + std::to_string(offset) + ", +" + std::to_string(bytes) +
                            ") is past the segment's " + std::to_string(seg.capacity) + " bytes");
  const size_t end = (offset + bytes) / seg.granule;
  std::vector<std::pair<size_t, size_t>> made;
  try {
    for (size_t g = offset / seg.granule; g < end;) {
      if (isMapped(seg, g)) {
        ++g;
        continue;
      }
      size_t stop = g;
      while (stop < end && !isMapped(seg, stop)) ++stop;
      mapStretch(seg, g, stop - g);
      made.emplace_back(g, stop - g);
      seg.runs[g] = stop - g;
      g = stop;
    }
  } catch (...) {
    for (const auto& [first, count] : made) {
      cuMemUnmap(seg.base + first * seg.granule, count * seg.granule);
      seg.runs.erase(first);
    }
    throw;
  }
  size_t granules = 0;
  for (const auto& run : made) granules += run.second;
  return granules * seg.granule;
}

}  // namespace ex30
