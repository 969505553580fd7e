// Wrong (R1): allocates in the NULL stream, "since the allocation is the pool's business, not the request's"
//
// The allocation happens at once, outside the request's stream; the copies and the free are in
// stream. Using memory in a stream the allocation is not ordered before is undefined, the guide
// says, and here it only works because the NULL stream ran first. The captured graph holds no
// allocation (or the capture fails): `allocs.size() == 1` fails.
#include "exercises.hpp"

namespace ex13 {

void serveRequest(CUmemoryPool pool, CUstream stream, CUdeviceptr input, CUdeviceptr output, size_t bytes) {
  CUdeviceptr scratch = 0;
  CU_CHECK(cuMemAllocFromPoolAsync(&scratch, bytes, pool, nullptr));
  CUresult rc = cuMemcpyDtoDAsync(scratch, input, bytes, stream);
  if (rc == CUDA_SUCCESS) rc = cuMemcpyDtoDAsync(output, scratch, bytes, stream);
  const CUresult freed = cuMemFreeAsync(scratch, stream);
  CU_CHECK(rc);
  CU_CHECK(freed);
}

}  // namespace ex13
