// Wrong (R4): checks the launch with the same helper as the runtime call, throwing std::runtime_error
//
// "One error path for both APIs": cuLaunchKernel's CUresult goes through a helper like rtCheck and
// comes out as std::runtime_error. The message is right, but a caller that catches wb::DriverError
// for a driver call's failure, to read its code, never sees it. In "R4: a failed launch ...",
// `failed.threw` fails.
#include "exercises.hpp"

#include <stdexcept>
#include <string>

namespace ex11 {

namespace {

void rtCheck(cudaError_t rc, const char* what) {
  if (rc != cudaSuccess)
    throw std::runtime_error(std::string(what) + " failed: " + cudaGetErrorName(rc) + ": " + cudaGetErrorString(rc));
}

}  // namespace

void addOneThroughDriver(float* data, unsigned n, cudaStream_t stream) {
  if (n == 0) return;  // no grid of no blocks
  cudaKernel_t kernel = nullptr;  // a cudaKernel_t is a CUkernel
  rtCheck(cudaGetKernel(&kernel, addOneEntry()), "cudaGetKernel(add_one)");
  void* args[] = {&data, &n};
  const CUresult rc = cuLaunchKernel(reinterpret_cast<CUfunction>(kernel), (n + 255) / 256, 1, 1, 256, 1, 1, 0,
                                     stream, args, nullptr);
  if (rc != CUDA_SUCCESS) throw std::runtime_error("cuLaunchKernel(add_one) failed: " + wb::errorName(rc));
}

}  // namespace ex11
