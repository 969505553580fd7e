// Wrong (R1): launches into the NULL stream (the 0 of every sample) instead of the caller's stream
//
// The kernel runs, in the legacy stream of the current context, which does not wait for the
// framework's non-blocking stream: it adds one before the framework's zeroing has run, the zeroing
// then wipes it out, and the check's `wrongFirst + wrongRest == 0` fails.
#include "exercises.hpp"

#include <stdexcept>
#include <string>

namespace ex11 {

void addOneThroughDriver(float* data, unsigned n, cudaStream_t /*stream*/) {
  if (n == 0) return;
  cudaKernel_t kernel = nullptr;
  const cudaError_t rc = cudaGetKernel(&kernel, addOneEntry());
  if (rc != cudaSuccess) throw std::runtime_error(std::string("cudaGetKernel: ") + cudaGetErrorName(rc));
  void* args[] = {&data, &n};
  CU_CHECK(cuLaunchKernel(reinterpret_cast<CUfunction>(kernel), (n + 255) / 256, 1, 1, 256, 1, 1, 0, nullptr, args,
                          nullptr));
}

}  // namespace ex11
