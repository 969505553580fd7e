// Wrong (R1): passes the value as a double
//
// "A scalar is a scalar": kernelParams[i] must point at exactly the type the kernel declares. fill
// takes a float and reads the first four bytes of the double it is handed instead (for 4.0, the
// low half of its bits: 0.0f).
#include "exercises.hpp"

namespace ex29 {

void setFillValue(CUgraphExec exec, CUgraphNode node, float value) {
  CUDA_KERNEL_NODE_PARAMS p{};
  CU_CHECK(cuGraphKernelNodeGetParams(node, &p));
  CUdeviceptr out = *static_cast<CUdeviceptr*>(p.kernelParams[0]);
  unsigned n = *static_cast<unsigned*>(p.kernelParams[2]);
  double wide = value;
  void* args[] = {&out, &wide, &n};
  p.kernelParams = args;
  p.extra = nullptr;
  CU_CHECK(cuGraphExecKernelNodeSetParams(exec, node, &p));
}

}  // namespace ex29
