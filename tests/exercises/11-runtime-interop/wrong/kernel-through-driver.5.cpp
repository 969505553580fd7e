// Wrong (R1): launches n / 256 blocks, rounding down, as if n were always a whole number of blocks
//
// add_one loops over its elements with the grid's stride, so for the check's 1000 elements three
// blocks still cover them all; but for the first 100 the grid has no block at all, which
// cuLaunchKernel refuses, and the check's first case fails with the error CU_CHECK throws.
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
  CU_CHECK(cuLaunchKernel(reinterpret_cast<CUfunction>(kernel), n / 256, 1, 1, 256, 1, 1, 0, stream, args, nullptr));
}

}  // namespace ex11
