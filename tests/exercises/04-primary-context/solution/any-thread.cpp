// Reference solution of lesson 04's exercise any-thread (lessons/04-primary-context/exercises.cpp).
#include "exercises.hpp"

namespace ex04 {

// Retain for the handle (it makes nothing current), push it over whatever the thread has current,
// allocate, pop back to exactly the stack the caller had, and give the retain back: the caller's
// own retain keeps the context, and this memory, alive. Every way out, a refused push or allocation
// included, pops what was pushed and releases what was retained before the error is thrown.
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
  CU_CHECK(rc);
  return p;
}

}  // namespace ex04
