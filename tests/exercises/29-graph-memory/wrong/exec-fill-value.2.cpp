// Wrong (R2): changes the template as well as the executable graph, "to keep them in step"
//
// The engine instantiates from the template again later, for another batch size: it must find the
// node as captured. The template's value argument must stay 1.
#include "exercises.hpp"

namespace ex29 {

void setFillValue(CUgraphExec exec, CUgraphNode node, float value) {
  CUDA_KERNEL_NODE_PARAMS p{};
  CU_CHECK(cuGraphKernelNodeGetParams(node, &p));
  CUdeviceptr out = *static_cast<CUdeviceptr*>(p.kernelParams[0]);
  unsigned n = *static_cast<unsigned*>(p.kernelParams[2]);
  void* args[] = {&out, &value, &n};
  p.kernelParams = args;
  p.extra = nullptr;
  CU_CHECK(cuGraphExecKernelNodeSetParams(exec, node, &p));
  CU_CHECK(cuGraphKernelNodeSetParams(node, &p));
}

}  // namespace ex29
