// Wrong (R1): waits with EQ, for the value exactly
//
// A host that has moved the flag past the value (it skipped a step) leaves the graph waiting.
#include "exercises.hpp"

namespace ex27 {

CUgraphNode addWaitNode(CUgraph graph, CUcontext ctx, const CUgraphNode* deps, size_t count, CUdeviceptr flag,
                        cuuint32_t value) {
  CUstreamBatchMemOpParams op{};
  op.waitValue.operation = CU_STREAM_MEM_OP_WAIT_VALUE_32;
  op.waitValue.address = flag;
  op.waitValue.value = value;
  op.waitValue.flags = CU_STREAM_WAIT_VALUE_EQ;
  CUDA_BATCH_MEM_OP_NODE_PARAMS params{};
  params.ctx = ctx;
  params.count = 1;
  params.paramArray = &op;
  params.flags = 0;
  CUgraphNode node = nullptr;
  CU_CHECK(cuGraphAddBatchMemOpNode(&node, graph, deps, count, &params));
  return node;
}

}  // namespace ex27
