// Wrong (R1): gives the node one block of 32 threads, "a warp, the smallest launch there is"
//
// "Anything below a warp wastes the rest of it anyway." The task fixes one block of one thread: the
// kernel's work is written for a single thread, and 32 of them do it 32 times over (or race for
// it). In "R1 R2 R3: after a programmatic dependency ...", the node's parameters say 32 threads, and
// `p.blockDimX == 1 ...` fails.
#include "exercises.hpp"

#include <vector>

namespace ex20 {

// The capture's dependencies come with their edge data, or not at all: asked without it, a
// dependency with programmatic data makes the query CUDA_ERROR_LOSSY_QUERY. The arrays the query
// returns live until the next call on the stream, so they are copied first. The node is added with
// no dependency, then given each one with its own data; last, the stream's next work is set to depend
// on the node alone (SET, not ADD: the old dependencies are behind the node now).
CUgraphNode appendToCapture(CUstream stream, CUfunction f, void** args) {
#if CUDA_VERSION >= 12030
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  CUgraph graph = nullptr;
  const CUgraphNode* deps = nullptr;
  const CUgraphEdgeData* data = nullptr;
  size_t n = 0;
  CU_CHECK(cuStreamGetCaptureInfo_v3(stream, &status, nullptr, &graph, &deps, &data, &n));
  if (status != CU_STREAM_CAPTURE_STATUS_ACTIVE)
    wb::throwDriverError(CUDA_ERROR_ILLEGAL_STATE, "appendToCapture: the stream is not capturing", __FILE__, __LINE__);
  const std::vector<CUgraphNode> from(deps, deps + n);
  const std::vector<CUgraphEdgeData> edgeData(data, data + n);
  CUDA_KERNEL_NODE_PARAMS params{};
  params.func = f;
  params.gridDimX = params.gridDimY = params.gridDimZ = 1;
  params.blockDimX = 32;  // "one warp"
  params.blockDimY = params.blockDimZ = 1;
  params.kernelParams = args;
  CUgraphNode node = nullptr;
  CU_CHECK(cuGraphAddKernelNode(&node, graph, nullptr, 0, &params));
  if (n) {
    const std::vector<CUgraphNode> to(n, node);
    CU_CHECK(cuGraphAddDependencies_v2(graph, from.data(), to.data(), edgeData.data(), n));
  }
  CU_CHECK(cuStreamUpdateCaptureDependencies_v2(stream, &node, nullptr, 1, CU_STREAM_SET_CAPTURE_DEPENDENCIES));
  return node;
#else
  (void)stream, (void)f, (void)args;
  wb::throwDriverError(CUDA_ERROR_NOT_SUPPORTED, "edge data needs CUDA 12.3", __FILE__, __LINE__);
#endif
}

}  // namespace ex20
