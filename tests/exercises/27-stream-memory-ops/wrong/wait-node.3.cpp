// Wrong (R3): leaves the context out of the node's parameters
//
// The node is not of the context asked for (or the driver refuses it).
#include "exercises.hpp"

namespace ex27 {

CUgraphNode addWaitNode(CUgraph graph, CUcontext ctx, const CUgraphNode* deps, size_t count, CUdeviceptr flag,
                        cuuint32_t value) {
  (void)ctx;  // the mistake: the context given is never used
  CUstreamBatchMemOpParams op{};
  op.waitValue.operation = CU_STREAM_MEM_OP_WAIT_VALUE_32;
  op.waitValue.address = flag;
  op.waitValue.value = value;
  op.waitValue.flags = CU_STREAM_WAIT_VALUE_GEQ;
  CUDA_BATCH_MEM_OP_NODE_PARAMS params{};
  params.count = 1;
  params.paramArray = &op;
  params.flags = 0;
  CUgraphNode node = nullptr;
  CU_CHECK(cuGraphAddBatchMemOpNode(&node, graph, deps, count, &params));
  return node;
}

}  // namespace ex27
