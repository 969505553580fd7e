// Wrong (R2): launches whatever n is, so an empty tensor becomes a launch of no blocks
//
// Every real tensor is handled, but for n = 0 the grid has no blocks, which cuLaunchKernel refuses
// (CUDA_ERROR_INVALID_VALUE, as other drivers were seen to: the GPU run confirms it for this one),
// and the check's empty-tensor case fails with the error CU_CHECK throws.
#include "exercises.hpp"

namespace ex11 {

void scaleInStream(CUkernel scale, float* data, unsigned n, float factor, float offset, cudaStream_t stream) {
  CUdeviceptr p = reinterpret_cast<CUdeviceptr>(data);
  void* args[] = {&p, &factor, &offset, &n};
  CU_CHECK(cuLaunchKernel(reinterpret_cast<CUfunction>(scale), (n + 255) / 256, 1, 1, 256, 1, 1, 0, stream, args,
                          nullptr));
}

}  // namespace ex11
