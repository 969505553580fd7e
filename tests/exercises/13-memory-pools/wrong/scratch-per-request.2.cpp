// Wrong (R1): takes the scratch buffer with cuMemAllocAsync, from the device's current pool, not the pool given
//
// "cuMemAllocAsync is the stream-ordered allocation; the pool parameter is for the free." The
// buffer comes from the default pool, which the whole process shares, and the pool given never
// sees it: `pool.stat(CU_MEMPOOL_ATTR_USED_MEM_HIGH) >= bytes` fails.
#include "exercises.hpp"

namespace ex13 {

void serveRequest(CUmemoryPool pool, CUstream stream, CUdeviceptr input, CUdeviceptr output, size_t bytes) {
  (void)pool;
  CUdeviceptr scratch = 0;
  CU_CHECK(cuMemAllocAsync(&scratch, bytes, stream));
  CUresult rc = cuMemcpyDtoDAsync(scratch, input, bytes, stream);
  if (rc == CUDA_SUCCESS) rc = cuMemcpyDtoDAsync(output, scratch, bytes, stream);
  const CUresult freed = cuMemFreeAsync(scratch, stream);
  CU_CHECK(rc);
  CU_CHECK(freed);
}

}  // namespace ex13
