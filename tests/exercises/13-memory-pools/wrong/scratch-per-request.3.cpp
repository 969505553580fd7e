// Wrong (R5): makes the pool the device's current pool (cuDeviceSetMemPool), then allocates with cuMemAllocAsync
//
// Lesson 13's step 3 shows cuDeviceSetMemPool steering cuMemAllocAsync, and it works: the buffer
// comes from the pool. But the current pool is the whole process's, and every other library's
// cuMemAllocAsync (the runtime's cudaMallocAsync too) now takes from this request's pool:
// `currentPool(lab.dev) == currentBefore` fails (and `setPoolCalls() == setBefore`).
#include "exercises.hpp"

namespace ex13 {

void serveRequest(CUmemoryPool pool, CUstream stream, CUdeviceptr input, CUdeviceptr output, size_t bytes) {
  CUdevice dev = 0;
  CU_CHECK(cuCtxGetDevice(&dev));
  CU_CHECK(cuDeviceSetMemPool(dev, pool));
  CUdeviceptr scratch = 0;
  CU_CHECK(cuMemAllocAsync(&scratch, bytes, stream));
  CUresult rc = cuMemcpyDtoDAsync(scratch, input, bytes, stream);
  if (rc == CUDA_SUCCESS) rc = cuMemcpyDtoDAsync(output, scratch, bytes, stream);
  const CUresult freed = cuMemFreeAsync(scratch, stream);
  CU_CHECK(rc);
  CU_CHECK(freed);
}

}  // namespace ex13
