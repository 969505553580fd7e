// Wrong (R1): allocates in the primary context of the current context's device, "the caller's device is the one it means"
//
// Where nothing is current, or the caller's context is on dev, that is dev's primary context. With
// device 0's context current and dev 1, the memory lands in device 0's primary context:
// `ownerOf(onDevice1.p) == primary1.get()` fails.
// Two devices: with one GPU, the current context's device is always dev.
#include "exercises.hpp"

namespace ex04 {

CUdeviceptr allocateInPrimary(CUdevice dev, size_t bytes) {
  CUcontext current = nullptr;
  CU_CHECK(cuCtxGetCurrent(&current));
  if (current) CU_CHECK(cuCtxGetDevice(&dev));
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
  CU_CHECK(rc);
  return p;
}

}  // namespace ex04
