// Wrong (R3): makes the batch call for an empty list too
//
// "The driver can handle a count of 0": whether it refuses it or not, a call that has nothing to do
// still costs a trip into the driver, and the task says an empty list makes no call. The check's "a call
// was made for an empty list" fails (and the driver's error, if it refuses, is thrown).
#include "exercises.hpp"

namespace ex23 {

void handOver(const std::vector<Range>& ranges, CUmemLocation to, CUstream stream) {
#if CUDA_VERSION >= 13000
  std::vector<CUdeviceptr> ptrs;
  std::vector<size_t> sizes;
  for (const Range& r : ranges) ptrs.push_back(r.ptr), sizes.push_back(r.bytes);
  size_t from = 0;
  CU_CHECK(cuMemDiscardAndPrefetchBatchAsync(ptrs.data(), sizes.data(), ptrs.size(), &to, &from, 1, 0, stream));
#else
  for (const Range& r : ranges) CU_CHECK(wb::memPrefetchAsync(r.ptr, r.bytes, to, 0, stream));
#endif
}

}  // namespace ex23
