// Wrong (R3): synchronises the stream after the launch, "so the result is there when the call returns"
//
// The values come out right, but the library now blocks the framework's thread until everything
// queued in the stream before it has run, and a library handed a stream only enqueues into it. With
// the stream held by a gate the call returns only at the gate's deadline, and the check's
// `seen == wb::Gate::Waiting` fails.
#include "exercises.hpp"

namespace ex11 {

void scaleInStream(CUkernel scale, float* data, unsigned n, float factor, float offset, cudaStream_t stream) {
  if (n == 0) return;
  CUdeviceptr p = reinterpret_cast<CUdeviceptr>(data);
  void* args[] = {&p, &factor, &offset, &n};
  CU_CHECK(cuLaunchKernel(reinterpret_cast<CUfunction>(scale), (n + 255) / 256, 1, 1, 256, 1, 1, 0, stream, args,
                          nullptr));
  CU_CHECK(cuStreamSynchronize(stream));
}

}  // namespace ex11
