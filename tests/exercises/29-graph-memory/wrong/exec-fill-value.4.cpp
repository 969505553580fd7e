// Wrong (R3): ignores what the driver returns
//
// "Setting a parameter cannot fail": when reading the template node fails, this goes on with zeroed
// parameters and the failure never reaches the caller, whose next launch fills with the old value.
#include "exercises.hpp"

namespace ex29 {

void setFillValue(CUgraphExec exec, CUgraphNode node, float value) {
  CUDA_KERNEL_NODE_PARAMS p{};
  if (cuGraphKernelNodeGetParams(node, &p) != CUDA_SUCCESS) return;
  CUdeviceptr out = *static_cast<CUdeviceptr*>(p.kernelParams[0]);
  unsigned n = *static_cast<unsigned*>(p.kernelParams[2]);
  void* args[] = {&out, &value, &n};
  p.kernelParams = args;
  p.extra = nullptr;
  cuGraphExecKernelNodeSetParams(exec, node, &p);
}

}  // namespace ex29
