// Wrong (R1): one discard-and-prefetch call per range
//
// "A batch of one is still a batch": it is, but each call is a separate trip into the driver and a
// separate operation in the stream, which is what the batch call exists to save; the task asks for one
// call. Three ranges make three calls: the check's "not one cuMemDiscardAndPrefetchBatchAsync call" fails.
#include "exercises.hpp"

namespace ex23 {

void handOver(const std::vector<Range>& ranges, CUmemLocation to, CUstream stream) {
  if (ranges.empty()) return;
#if CUDA_VERSION >= 13000
  for (Range r : ranges) {
    size_t from = 0;
    CU_CHECK(cuMemDiscardAndPrefetchBatchAsync(&r.ptr, &r.bytes, 1, &to, &from, 1, 0, stream));
  }
#else
  for (const Range& r : ranges) CU_CHECK(wb::memPrefetchAsync(r.ptr, r.bytes, to, 0, stream));
#endif
}

}  // namespace ex23
