// Wrong (R1): creates the context on the device of the caller's current context, "the probe checks the application's GPU"
//
// dev is ignored where the caller has a context current. With one GPU it is the same device; the
// check's second GPU asks for device 1 while device 0's context is current: `onDevice1 == dev1`
// fails.
// Two devices: with one GPU, the caller's device and dev are the same device.
#include "exercises.hpp"

namespace ex03 {

namespace {

// Destroys at scope exit. cuCtxDestroy also pops the context where it is current, which gives the
// caller's stack back as it was.
struct DestroyAtExit {
  CUcontext ctx;
  ~DestroyAtExit() { cuCtxDestroy(ctx); }
};

}  // namespace

void withPrivateContext(CUdevice dev, const std::function<void()>& work) {
  CUcontext ctx = nullptr;
  CUdevice target = dev;
  CUcontext current = nullptr;
  if (cuCtxGetCurrent(&current) == CUDA_SUCCESS && current) CU_CHECK(cuCtxGetDevice(&target));
  CU_CHECK(wb::createContext(&ctx, 0, target));
  DestroyAtExit destroy{ctx};
  work();
}

}  // namespace ex03
