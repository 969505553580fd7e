// Wrong (R1): discards the ranges but never prefetches them to `to`
//
// "Discarding frees the pages; the next stage's writes will place them": they will, one fault at a
// time, which is what handing them over was to spare. The ranges' LAST_PREFETCH_LOCATION stays
// CU_DEVICE_INVALID and no cuMemDiscardAndPrefetchBatchAsync call is made: the check fails on both.
#include "exercises.hpp"

namespace ex23 {

void handOver(const std::vector<Range>& ranges, CUmemLocation to, CUstream stream) {
  if (ranges.empty()) return;
#if CUDA_VERSION >= 13000
  (void)to;
  std::vector<CUdeviceptr> ptrs;
  std::vector<size_t> sizes;
  for (const Range& r : ranges) ptrs.push_back(r.ptr), sizes.push_back(r.bytes);
  CU_CHECK(cuMemDiscardBatchAsync(ptrs.data(), sizes.data(), ptrs.size(), 0, stream));
#else
  for (const Range& r : ranges) CU_CHECK(wb::memPrefetchAsync(r.ptr, r.bytes, to, 0, stream));
#endif
}

}  // namespace ex23
