// Reference solution of lesson 23's exercise hand-over (lessons/23-unified-memory/exercises.cpp).
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
  CU_CHECK(cuMemDiscardAndPrefetchBatchAsync(ptrs.data(), sizes.data(), ptrs.size(), &to, &from, 1, 0, stream));
#else
  for (const Range& r : ranges) CU_CHECK(wb::memPrefetchAsync(r.ptr, r.bytes, to, 0, stream));
#endif
}

}  // namespace ex23
