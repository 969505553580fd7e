// Wrong (R3): looks the kernel up once with cudaGetFuncBySymbol and keeps the handle, as one keeps a CUfunction of cuModuleGetFunction
//
// A cudaFunction_t is a CUfunction, which belongs to one context: the one the runtime used at the
// lookup, the primary context here. Launched later into a stream of the context the application
// created, it is refused (lesson 06 showed CUDA_ERROR_INVALID_HANDLE for a function of another
// context), and the check's created-context case fails with the error CU_CHECK throws.
#include "exercises.hpp"

#include <stdexcept>
#include <string>

namespace ex11 {

void addOneThroughDriver(float* data, unsigned n, cudaStream_t stream) {
  if (n == 0) return;
  static CUfunction function = nullptr;
  if (!function) {
    cudaFunction_t found = nullptr;
    const cudaError_t rc = cudaGetFuncBySymbol(&found, addOneEntry());
    if (rc != cudaSuccess) throw std::runtime_error(std::string("cudaGetFuncBySymbol: ") + cudaGetErrorName(rc));
    function = found;  // a cudaFunction_t is a CUfunction
  }
  void* args[] = {&data, &n};
  CU_CHECK(cuLaunchKernel(function, (n + 255) / 256, 1, 1, 256, 1, 1, 0, stream, args, nullptr));
}

}  // namespace ex11
