// Wrong (R2): synchronises the stream after the launch, "the way <<<>>> code checks its kernels"
//
// The values come out right, but the call now waits for everything queued in the caller's stream
// before it. With the stream held by a gate the call returns only at the gate's deadline, and the
// check's `seen == wb::Gate::Waiting` fails.
#include "exercises.hpp"

#include <stdexcept>
#include <string>

namespace ex11 {

void addOneThroughDriver(float* data, unsigned n, cudaStream_t stream) {
  if (n == 0) return;
  cudaKernel_t kernel = nullptr;
  const cudaError_t rc = cudaGetKernel(&kernel, addOneEntry());
  if (rc != cudaSuccess) throw std::runtime_error(std::string("cudaGetKernel: ") + cudaGetErrorName(rc));
  void* args[] = {&data, &n};
  CU_CHECK(cuLaunchKernel(reinterpret_cast<CUfunction>(kernel), (n + 255) / 256, 1, 1, 256, 1, 1, 0, stream, args,
                          nullptr));
  CU_CHECK(cuStreamSynchronize(stream));
}

}  // namespace ex11
