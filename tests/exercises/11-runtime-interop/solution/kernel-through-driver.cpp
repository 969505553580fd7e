// Reference solution of lesson 11's exercise kernel-through-driver (lessons/11-runtime-interop/exercises.cpp).
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

// cudaGetKernel gives the kernel's CUkernel, which belongs to no context: launched into a stream, it
// runs in the stream's context and is loaded there first if it has to be, whatever this thread has
// current. The CUfunction of cudaGetFuncBySymbol (or of cuKernelGetFunction) belongs to one context
// (the reference does not say which for cudaGetFuncBySymbol), and a stream of another refuses it.
void addOneThroughDriver(float* data, unsigned n, cudaStream_t stream) {
  if (n == 0) return;  // no grid of no blocks
  cudaKernel_t kernel = nullptr;  // a cudaKernel_t is a CUkernel
  rtCheck(cudaGetKernel(&kernel, addOneEntry()), "cudaGetKernel(add_one)");
  void* args[] = {&data, &n};
  CU_CHECK(cuLaunchKernel(reinterpret_cast<CUfunction>(kernel), (n + 255) / 256, 1, 1, 256, 1, 1, 0, stream, args,
                          nullptr));
}

}  // namespace ex11
