// Wrong (R2): makes the batch call in the NULL stream
//
// "The next stage synchronises anyway": the batch calls refuse the legacy NULL stream, and the next
// stage's work is in stream, not ordered with it. The call fails and handOver throws on the first hand
// over (or, where a driver accepted it, `gBatchStream == s.get()` fails).
#include "exercises.hpp"

namespace ex23 {

void handOver(const std::vector<Range>& ranges, CUmemLocation to, CUstream stream) {
  (void)stream;
  if (ranges.empty()) return;
#if CUDA_VERSION >= 13000
  std::vector<CUdeviceptr> ptrs;
  std::vector<size_t> sizes;
  for (const Range& r : ranges) ptrs.push_back(r.ptr), sizes.push_back(r.bytes);
  size_t from = 0;
  CU_CHECK(cuMemDiscardAndPrefetchBatchAsync(ptrs.data(), sizes.data(), ptrs.size(), &to, &from, 1, 0, nullptr));
#else
  for (const Range& r : ranges) CU_CHECK(wb::memPrefetchAsync(r.ptr, r.bytes, to, 0, nullptr));
#endif
}

}  // namespace ex23
