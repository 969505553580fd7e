// Wrong (R3): looks the kernel up with cudaGetFuncBySymbol at every call, so the handle is always fresh
//
// Fresh, but still a CUfunction of one context, and the caller's thread need not have the stream's
// context current: called where the primary context is current with a stream of the context the
// application created (or, if the runtime hands out the primary context's function, called with
// that context current), the launch is refused. The check's created-context cases fail with the
// error CU_CHECK throws.
#include "exercises.hpp"

#include <stdexcept>
#include <string>

namespace ex11 {

void addOneThroughDriver(float* data, unsigned n, cudaStream_t stream) {
  if (n == 0) return;
  cudaFunction_t function = nullptr;  // a cudaFunction_t is a CUfunction
  const cudaError_t rc = cudaGetFuncBySymbol(&function, addOneEntry());
  if (rc != cudaSuccess) throw std::runtime_error(std::string("cudaGetFuncBySymbol: ") + cudaGetErrorName(rc));
  void* args[] = {&data, &n};
  CU_CHECK(cuLaunchKernel(function, (n + 255) / 256, 1, 1, 256, 1, 1, 0, stream, args, nullptr));
}

}  // namespace ex11
