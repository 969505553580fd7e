// Wrong (R4): a refusal returns 0 instead of throwing, "a null pointer says it failed, as a refused malloc does"
//
// The stack and the retains are put back as they should be, but the caller gets 0 where it expected
// an exception, and the refusal's code is lost. `refusal != CUDA_SUCCESS` (1 PiB) and `r.thrown ==
// CUDA_ERROR_INVALID_CONTEXT` (the refused push) fail.
#include "exercises.hpp"

namespace ex04 {

CUdeviceptr allocateInPrimary(CUdevice dev, size_t bytes) {
  CUcontext primary = nullptr;
  CU_CHECK(cuDevicePrimaryCtxRetain(&primary, dev));
  CUdeviceptr p = 0;
  CUresult rc = cuCtxPushCurrent(primary);
  if (rc == CUDA_SUCCESS) {
    rc = cuMemAlloc(&p, bytes);
    CUcontext popped = nullptr;
    cuCtxPopCurrent(&popped);  // back to the caller's stack, whether the allocation worked or not
  }
  cuDevicePrimaryCtxRelease(dev);
  return rc == CUDA_SUCCESS ? p : 0;
}

}  // namespace ex04
