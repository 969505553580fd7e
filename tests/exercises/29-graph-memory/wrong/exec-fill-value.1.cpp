// Wrong (R1 R2): changes the template node with cuGraphNodeSetParams
//
// "Set the node's parameters": the template's. An executable graph is a copy made at
// instantiation; a change to the template reaches it only through a new instantiation or an update.
// The next launch still fills with the old value, and the template is changed.
#include "exercises.hpp"

namespace ex29 {

void setFillValue(CUgraphExec, CUgraphNode node, float value) {
  CUDA_KERNEL_NODE_PARAMS p{};
  CU_CHECK(cuGraphKernelNodeGetParams(node, &p));
  CUdeviceptr out = *static_cast<CUdeviceptr*>(p.kernelParams[0]);
  unsigned n = *static_cast<unsigned*>(p.kernelParams[2]);
  void* args[] = {&out, &value, &n};
  p.kernelParams = args;
  p.extra = nullptr;
  CU_CHECK(cuGraphKernelNodeSetParams(node, &p));
}

}  // namespace ex29
