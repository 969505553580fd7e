// Wrong (R3): checks the push with CU_CHECK right after the retain, "a retained context can always be pushed"
//
// When the push is refused, the retain taken just before is never given back. The check refuses
// the push: `leftAfterEntering == ""` fails (1 primary-context retain more), and so does `leaked ==
// 0`.
#include "exercises.hpp"

namespace ex04 {

CUdeviceptr allocateInPrimary(CUdevice dev, size_t bytes) {
  CUcontext primary = nullptr;
  CU_CHECK(cuDevicePrimaryCtxRetain(&primary, dev));
  CU_CHECK(cuCtxPushCurrent(primary));
  CUdeviceptr p = 0;
  const CUresult rc = cuMemAlloc(&p, bytes);
  CUcontext popped = nullptr;
  cuCtxPopCurrent(&popped);
  cuDevicePrimaryCtxRelease(dev);
  CU_CHECK(rc);
  return p;
}

}  // namespace ex04
