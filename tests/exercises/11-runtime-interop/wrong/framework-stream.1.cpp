// Wrong (R5): when no context is current, retains device 0's primary context and makes it current with cuCtxSetCurrent, and leaves it there
//
// What many launchers do to "have a context". The kernel runs in the right stream with the right
// values, but a worker thread that had no context now has the primary context current, which
// nobody there set, and a retain nobody will release. The check's `after == nullptr` in the new
// thread fails (and the holdings show one primary-context retain more).
#include "exercises.hpp"

namespace ex11 {

void scaleInStream(CUkernel scale, float* data, unsigned n, float factor, float offset, cudaStream_t stream) {
  if (n == 0) return;
  CUcontext current = nullptr;
  CU_CHECK(cuCtxGetCurrent(&current));
  if (!current) {
    CUdevice dev = 0;
    CU_CHECK(cuDeviceGet(&dev, 0));
    CU_CHECK(cuDevicePrimaryCtxRetain(&current, dev));
    CU_CHECK(cuCtxSetCurrent(current));
  }
  CUdeviceptr p = reinterpret_cast<CUdeviceptr>(data);
  void* args[] = {&p, &factor, &offset, &n};
  CU_CHECK(cuLaunchKernel(reinterpret_cast<CUfunction>(scale), (n + 255) / 256, 1, 1, 256, 1, 1, 0, stream, args,
                          nullptr));
}

}  // namespace ex11
