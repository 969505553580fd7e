// Wrong (R4): leaves the graph behind when a call fails
//
// No catch: a failed call throws past the graph it began, which nothing destroys.
#include "exercises.hpp"

#include <stdexcept>
#include <utility>

namespace ex31 {

#if CUDA_VERSION >= 12040
namespace {
CUgraphNode addKernel(CUgraph graph, CUgraphNode after, CUfunction f, void** args) {
  CUDA_KERNEL_NODE_PARAMS p{};
  p.func = f;
  p.gridDimX = p.gridDimY = p.gridDimZ = 1;
  p.blockDimX = kBlock, p.blockDimY = p.blockDimZ = 1;
  p.kernelParams = args;
  CUgraphNode node = nullptr;
  CU_CHECK(cuGraphAddKernelNode(&node, graph, after ? &after : nullptr, after ? 1 : 0, &p));
  return node;
}
}  // namespace

// first (sets the condition) -> IF (body: open) -> the other ops -> store (advances the position).
// Nothing in it changes from step to step: what changes is in device memory.
CUgraph buildDeviceStep(const DeviceChain& c, CUcontext ctx) {
  CUgraph graph = nullptr;
  CU_CHECK(cuGraphCreate(&graph, 0));
  try {
    CUgraphConditionalHandle opens = 0;
    CU_CHECK(cuGraphConditionalHandleCreate(&opens, graph, ctx, 0, CU_GRAPH_COND_ASSIGN_DEFAULT));
    CUdeviceptr src = c.a, dst = c.b, pos = c.pos, cache = c.cache;
    unsigned n = c.n, rows = c.rowsPerBlock;
    void* firstArgs[] = {&dst, &src, &n, &pos, &rows, &opens};
    CUgraphNode last = addKernel(graph, nullptr, c.first, firstArgs);
    CUgraphNodeParams cond{};  // zeroed: the reference requires every unused byte to be 0
    cond.type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
    cond.conditional.handle = opens;
    cond.conditional.type = CU_GRAPH_COND_TYPE_IF;
    cond.conditional.size = 1;
    cond.conditional.ctx = ctx;
    CUgraphNode ifNode = nullptr;
    CU_CHECK(wb::graphAddNode(&ifNode, graph, &last, 1, &cond));
    void* openArgs[] = {&cache, &n, &rows, &pos};
    addKernel(cond.conditional.phGraph_out[0], nullptr, c.open, openArgs);
    last = ifNode;
    for (unsigned j = 1; j < c.ops; ++j) {
      std::swap(src, dst);
      void* args[] = {&dst, &src, &n, &pos};
      last = addKernel(graph, last, c.op, args);
    }
    void* storeArgs[] = {&cache, &dst, &n, &pos};
    addKernel(graph, last, c.store, storeArgs);
  } catch (...) {
    throw;
  }
  return graph;
}
#else
CUgraph buildDeviceStep(const DeviceChain&, CUcontext) {
  throw std::runtime_error("buildDeviceStep: conditional nodes need CUDA 12.4; this build has an older toolkit");
}
#endif

}  // namespace ex31
