// Wrong (R2): adds the node at the root, ignoring deps
//
// The wait no longer follows the work before it: it may be met, and release its dependants, before
// that work has run.
#include "exercises.hpp"

namespace ex27 {

CUgraphNode addWaitNode(CUgraph graph, CUcontext ctx, const CUgraphNode* deps, size_t count, CUdeviceptr flag,
                        cuuint32_t value) {
  (void)deps;  // the mistake: the dependencies given are never used
  (void)count;
  CUstreamBatchMemOpParams op{};
  op.waitValue.operation = CU_STREAM_MEM_OP_WAIT_VALUE_32;
  op.waitValue.address = flag;
  op.waitValue.value = value;
  op.waitValue.flags = CU_STREAM_WAIT_VALUE_GEQ;
  CUDA_BATCH_MEM_OP_NODE_PARAMS params{};
  params.ctx = ctx;
  params.count = 1;
  params.paramArray = &op;
  params.flags = 0;
  CUgraphNode node = nullptr;
  CU_CHECK(cuGraphAddBatchMemOpNode(&node, graph, nullptr, 0, &params));
  return node;
}

}  // namespace ex27
