// Reference solution of lesson 31's exercise set-step (lessons/31-decode-loop/exercises.cpp).
#include "exercises.hpp"

#include <stdexcept>
#include <string>
#include <utility>

namespace ex31 {

namespace {
// One kernel node of exec, to f(args) over one block: the driver copies the arguments at the call.
void setKernel(CUgraphExec exec, CUgraphNode node, CUfunction f, void** args) {
  CUDA_KERNEL_NODE_PARAMS p{};
  p.func = f;
  p.gridDimX = p.gridDimY = p.gridDimZ = 1;
  p.blockDimX = kBlock, p.blockDimY = p.blockDimZ = 1;
  p.kernelParams = args;
  CU_CHECK(cuGraphExecKernelNodeSetParams(exec, node, &p));
}
}  // namespace

// The same arguments launchStep gives, node by node, to the executable graph alone: the template's
// nodes only name which of exec's nodes to change. A step of another shape is refused before
// anything changes.
void setStep(CUgraphExec exec, const std::vector<CUgraphNode>& nodes, const Chain& c, unsigned pos) {
  if (nodes.size() != kernelsAt(c, pos))
    throw std::invalid_argument("setStep: the graph has " + std::to_string(nodes.size()) + " kernel nodes; step " +
                                std::to_string(pos) + " launches " + std::to_string(kernelsAt(c, pos)));
  unsigned n = c.n;
  size_t k = 0;
  if (pos % c.rowsPerBlock == 0) {
    CUdeviceptr block = c.cache + CUdeviceptr(pos) * n * sizeof(float);
    unsigned count = c.rowsPerBlock * n;
    void* args[] = {&block, &count};
    setKernel(exec, nodes[k++], c.open, args);
  }
  CUdeviceptr src = c.a, dst = c.b;
  for (unsigned j = 0; j < c.ops; ++j) {
    void* args[] = {&dst, &src, &n, &pos};
    setKernel(exec, nodes[k++], c.op, args);
    std::swap(src, dst);
  }
  CUdeviceptr row = c.cache + CUdeviceptr(pos) * n * sizeof(float);
  void* args[] = {&row, &src, &n};
  setKernel(exec, nodes[k], c.store, args);
}

}  // namespace ex31
