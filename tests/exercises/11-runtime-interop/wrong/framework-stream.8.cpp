// Wrong (R6): where no context is current, retains the stream's device's primary context and pushes it for the launch, and never releases it
//
// "A launch needs a current context": in a thread that has none, the library retains the primary
// context and pushes it around the launch, and pops it after, so the thread's stack is as it was.
// But the retain is never given back: each worker thread's first call keeps the primary context
// alive for good (a cuDevicePrimaryCtxReset or the framework's teardown no longer ends it). In "R4
// R5 R6: from a new thread ...", `held == ""` fails ("1 primary context retain more").
#include "exercises.hpp"

namespace ex11 {

void scaleInStream(CUkernel scale, float* data, unsigned n, float factor, float offset, cudaStream_t stream) {
  if (n == 0) return;  // an empty tensor: a grid of no blocks is not a launch, the driver refuses it
  CUdeviceptr p = reinterpret_cast<CUdeviceptr>(data);  // one address space: the runtime's pointer is the driver's
  void* args[] = {&p, &factor, &offset, &n};             // in the order of scale's parameters
  CUcontext current = nullptr;
  CU_CHECK(cuCtxGetCurrent(&current));
  if (current) {
    CU_CHECK(cuLaunchKernel(reinterpret_cast<CUfunction>(scale), (n + 255) / 256, 1, 1, 256, 1, 1, 0, stream, args,
                            nullptr));
    return;
  }
  CUdevice device = 0;
  CU_CHECK(cuDeviceGet(&device, 0));  // the framework's device
  CUcontext primary = nullptr;
  CU_CHECK(cuDevicePrimaryCtxRetain(&primary, device));  // kept, "for the next call"
  CU_CHECK(cuCtxPushCurrent(primary));
  const CUresult rc = cuLaunchKernel(reinterpret_cast<CUfunction>(scale), (n + 255) / 256, 1, 1, 256, 1, 1, 0, stream,
                                     args, nullptr);
  CUcontext popped = nullptr;
  cuCtxPopCurrent(&popped);
  CU_CHECK(rc);
}

}  // namespace ex11
