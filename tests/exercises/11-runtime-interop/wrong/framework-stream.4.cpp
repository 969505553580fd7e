// Wrong (R1): launches into the NULL stream (the 0 of every sample) instead of the framework's stream
//
// In the main thread the kernel runs, in the legacy stream of the primary context, which does not
// wait for the framework's non-blocking stream: it scales the ones before the framework's first
// add_one has run, and the check's `wrong == 0` fails (7 everywhere). In a thread
// with no context current the launch is refused outright.
#include "exercises.hpp"

namespace ex11 {

void scaleInStream(CUkernel scale, float* data, unsigned n, float factor, float offset, cudaStream_t /*stream*/) {
  if (n == 0) return;
  CUdeviceptr p = reinterpret_cast<CUdeviceptr>(data);
  void* args[] = {&p, &factor, &offset, &n};
  CU_CHECK(cuLaunchKernel(reinterpret_cast<CUfunction>(scale), (n + 255) / 256, 1, 1, 256, 1, 1, 0, nullptr, args,
                          nullptr));
}

}  // namespace ex11
