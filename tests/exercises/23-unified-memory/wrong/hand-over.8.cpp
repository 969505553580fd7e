// Wrong (R1): gives every range a location of its own (numPrefetchLocs = count)
//
// "One location per operation", as a batch of prefetches to different places is written: count
// copies of to and prefetchLocIdxs 0, 1, 2, ... The task fixes one location that applies from
// operation 0 on, which says the same with no arrays to keep in step. In "R1 R2 R4: handOver makes
// one discard-and-prefetch call ...", `gBatchForm.locations == 1` fails.
#include "exercises.hpp"

namespace ex23 {

// Discarding first tells the driver the old contents need not travel; the prefetch then makes the
// pages at to, ready for the next stage's writes. One call for the whole list, in stream order.
void handOver(const std::vector<Range>& ranges, CUmemLocation to, CUstream stream) {
  if (ranges.empty()) return;  // nothing to hand over: no call
#if CUDA_VERSION >= 13000
  std::vector<CUdeviceptr> ptrs;
  std::vector<size_t> sizes;
  for (const Range& r : ranges) ptrs.push_back(r.ptr), sizes.push_back(r.bytes);
  std::vector<CUmemLocation> to_(ranges.size(), to);
  std::vector<size_t> from(ranges.size());
  for (size_t i = 0; i < from.size(); ++i) from[i] = i;  // range i goes to location i
  CU_CHECK(cuMemDiscardAndPrefetchBatchAsync(ptrs.data(), sizes.data(), ptrs.size(), to_.data(), from.data(),
                                             from.size(), 0, stream));
#else
  for (const Range& r : ranges) CU_CHECK(wb::memPrefetchAsync(r.ptr, r.bytes, to, 0, stream));
#endif
}

}  // namespace ex23
