// Wrong (R2): makes the primary context current with cuCtxSetCurrent and "cleans up" with cuCtxSetCurrent(nullptr)
//
// From a fresh thread that is right, but where the caller had its own context current,
// cuCtxSetCurrent replaced it on top of the stack and cuCtxSetCurrent(nullptr) popped the stack
// empty: the caller's context is no longer current, and `stackAfter == "[caller's]"` fails.
#include "exercises.hpp"

namespace ex04 {

CUdeviceptr allocateInPrimary(CUdevice dev, size_t bytes) {
  CUcontext primary = nullptr;
  CU_CHECK(cuDevicePrimaryCtxRetain(&primary, dev));
  CUdeviceptr p = 0;
  CUresult rc = cuCtxSetCurrent(primary);
  if (rc == CUDA_SUCCESS) rc = cuMemAlloc(&p, bytes);
  cuCtxSetCurrent(nullptr);
  cuDevicePrimaryCtxRelease(dev);
  CU_CHECK(rc);
  return p;
}

}  // namespace ex04
