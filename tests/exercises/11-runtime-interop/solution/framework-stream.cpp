// Reference solution of lesson 11's exercise framework-stream (lessons/11-runtime-interop/exercises.cpp).
#include "exercises.hpp"

namespace ex11 {

// A CUkernel launched into a stream runs in the stream's context, and is loaded there first if it
// has to be (cuLaunchKernel's reference: the context "will either be taken from the specified
// stream hStream or the current context in case of NULL stream"). So the library needs no context
// of its own and touches nobody's: nothing is retained, pushed or set, and whatever this thread has
// current (nothing, the primary context, another library's) is still current afterwards, even when
// the launch throws. A library that must make other driver calls around its launch (a copy, a
// memset, cuKernelGetFunction) would push the stream's context for them and pop it on every exit.
void scaleInStream(CUkernel scale, float* data, unsigned n, float factor, float offset, cudaStream_t stream) {
  if (n == 0) return;  // an empty tensor: a grid of no blocks is not a launch, the driver refuses it
  CUdeviceptr p = reinterpret_cast<CUdeviceptr>(data);  // one address space: the runtime's pointer is the driver's
  void* args[] = {&p, &factor, &offset, &n};             // in the order of scale's parameters
  CU_CHECK(cuLaunchKernel(reinterpret_cast<CUfunction>(scale), (n + 255) / 256, 1, 1, 256, 1, 1, 0, stream, args,
                          nullptr));  // cudaStream_t is CUstream
}

}  // namespace ex11
