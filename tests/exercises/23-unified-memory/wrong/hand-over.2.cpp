// Wrong (R1): prefetches the ranges in a batch but never discards them
//
// "Discarding sounds dangerous; a prefetch is enough": the prefetch then carries the stale contents
// across the link for nothing, which is the cost the task is about. No cuMemDiscardAndPrefetchBatchAsync
// call is made: the check's "not one cuMemDiscardAndPrefetchBatchAsync call" fails.
#include "exercises.hpp"

namespace ex23 {

void handOver(const std::vector<Range>& ranges, CUmemLocation to, CUstream stream) {
  if (ranges.empty()) return;
#if CUDA_VERSION >= 13000
  std::vector<CUdeviceptr> ptrs;
  std::vector<size_t> sizes;
  for (const Range& r : ranges) ptrs.push_back(r.ptr), sizes.push_back(r.bytes);
  size_t from = 0;
  CU_CHECK(cuMemPrefetchBatchAsync(ptrs.data(), sizes.data(), ptrs.size(), &to, &from, 1, 0, stream));
#else
  for (const Range& r : ranges) CU_CHECK(wb::memPrefetchAsync(r.ptr, r.bytes, to, 0, stream));
#endif
}

}  // namespace ex23
