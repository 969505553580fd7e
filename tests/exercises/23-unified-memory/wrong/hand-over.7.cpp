// Wrong (R6): ignores what the batch call returns
//
// "A discard and a prefetch are hints: if the driver refuses, the next stage faults the pages in
// anyway." But a refusal is a wrong pointer, size or location, or a context in error, which the
// caller must hear of. In "R6: when the batch call fails handOver throws", `f.threw` fails.
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
  size_t from = 0;  // the one location applies from operation 0 on
  cuMemDiscardAndPrefetchBatchAsync(ptrs.data(), sizes.data(), ptrs.size(), &to, &from, 1, 0, stream);  // a hint
#else
  for (const Range& r : ranges) CU_CHECK(wb::memPrefetchAsync(r.ptr, r.bytes, to, 0, stream));
#endif
}

}  // namespace ex23
