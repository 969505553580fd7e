// Reference solution of lesson 29's exercise exec-fill-value (lessons/29-graph-memory/exercises.cpp).
#include "exercises.hpp"

namespace ex29 {

// The template node's parameters give the function, the shape and the other two arguments; the new
// value goes to the executable graph alone (the driver copies the arguments at the call).
void setFillValue(CUgraphExec exec, CUgraphNode node, float value) {
  CUDA_KERNEL_NODE_PARAMS p{};
  CU_CHECK(cuGraphKernelNodeGetParams(node, &p));
  CUdeviceptr out = *static_cast<CUdeviceptr*>(p.kernelParams[0]);
  unsigned n = *static_cast<unsigned*>(p.kernelParams[2]);
  void* args[] = {&out, &value, &n};
  p.kernelParams = args;
  p.extra = nullptr;
  CU_CHECK(cuGraphExecKernelNodeSetParams(exec, node, &p));
}

}  // namespace ex29
