// Wrong (R1): runs the work in the device's primary context (retained and pushed) instead of a new one, "contexts are expensive"
//
// Sharing the primary context is the right default (lesson 04), but this probe must not touch the
// application's context, and the application's context is the primary one: `inWork != app.get()`
// fails.
#include "exercises.hpp"

namespace ex03 {

namespace {

// Pops and releases at scope exit.
struct ReleaseAtExit {
  CUdevice dev;
  ~ReleaseAtExit() {
    CUcontext popped = nullptr;
    cuCtxPopCurrent(&popped);
    cuDevicePrimaryCtxRelease(dev);
  }
};

}  // namespace

void withPrivateContext(CUdevice dev, const std::function<void()>& work) {
  CUcontext ctx = nullptr;
  CU_CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
  if (const CUresult rc = cuCtxPushCurrent(ctx); rc != CUDA_SUCCESS) {
    cuDevicePrimaryCtxRelease(dev);
    CU_CHECK(rc);
  }
  ReleaseAtExit release{dev};
  work();
}

}  // namespace ex03
