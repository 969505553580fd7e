// Wrong (R2 R3): checks the allocation with CU_CHECK between the push and the pop
//
// The usual checked call, in the one place it must not throw: when the device refuses the
// allocation, the primary context stays pushed on the caller's stack and the retain is kept.
// Asked for 1 PiB, `stackAfterRefusal == "[caller's]"` and `leftAfterRefusal == ""` fail.
#include "exercises.hpp"

namespace ex04 {

CUdeviceptr allocateInPrimary(CUdevice dev, size_t bytes) {
  CUcontext primary = nullptr;
  CU_CHECK(cuDevicePrimaryCtxRetain(&primary, dev));
  CUdeviceptr p = 0;
  CUresult rc = cuCtxPushCurrent(primary);
  if (rc == CUDA_SUCCESS) {
    CU_CHECK(cuMemAlloc(&p, bytes));
    CUcontext popped = nullptr;
    cuCtxPopCurrent(&popped);
  }
  cuDevicePrimaryCtxRelease(dev);
  CU_CHECK(rc);
  return p;
}

}  // namespace ex04
