// Wrong (R1): launches n / 256 blocks, rounding down, as if every tensor were a whole number of blocks
//
// scale loops over its elements with the grid's stride, so a grid one block short still covers
// them, and the check's large tensors come out right; but a tensor smaller than a block gets a grid
// of no blocks, which cuLaunchKernel refuses, and the check's case of 100 floats fails with the
// error CU_CHECK throws.
#include "exercises.hpp"

namespace ex11 {

void scaleInStream(CUkernel scale, float* data, unsigned n, float factor, float offset, cudaStream_t stream) {
  if (n == 0) return;
  CUdeviceptr p = reinterpret_cast<CUdeviceptr>(data);
  void* args[] = {&p, &factor, &offset, &n};
  CU_CHECK(cuLaunchKernel(reinterpret_cast<CUfunction>(scale), n / 256, 1, 1, 256, 1, 1, 0, stream, args, nullptr));
}

}  // namespace ex11
