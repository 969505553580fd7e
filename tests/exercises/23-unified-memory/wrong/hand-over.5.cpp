// Wrong (R4): waits for the stream after the hand-over
//
// "The next stage must find the pages in place": stream order already puts the hand-over before the
// next stage's work in stream, and the host had other work to do. The check counts the wait: "handOver
// synchronised" fails.
#include "exercises.hpp"

namespace ex23 {

void handOver(const std::vector<Range>& ranges, CUmemLocation to, CUstream stream) {
  if (ranges.empty()) return;
#if CUDA_VERSION >= 13000
  std::vector<CUdeviceptr> ptrs;
  std::vector<size_t> sizes;
  for (const Range& r : ranges) ptrs.push_back(r.ptr), sizes.push_back(r.bytes);
  size_t from = 0;
  CU_CHECK(cuMemDiscardAndPrefetchBatchAsync(ptrs.data(), sizes.data(), ptrs.size(), &to, &from, 1, 0, stream));
#else
  for (const Range& r : ranges) CU_CHECK(wb::memPrefetchAsync(r.ptr, r.bytes, to, 0, stream));
#endif
  CU_CHECK(cuStreamSynchronize(stream));
}

}  // namespace ex23
