// Wrong (R5): ignores what cuStreamUpdateCaptureDependencies_v2 returns
//
// "The node is in the graph: telling the stream about it is a formality that cannot fail." When it
// does, the stream's next work does not follow the node, and the caller is told all went well. In
// "R5: when asking for the capture's dependencies, or setting the stream's, fails ...", the failed
// update returns the node, and `threw` fails for cuStreamUpdateCaptureDependencies_v2.
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
  params.blockDimX = params.blockDimY = params.blockDimZ = 1;
  params.kernelParams = args;
  CUgraphNode node = nullptr;
  CU_CHECK(cuGraphAddKernelNode(&node, graph, nullptr, 0, &params));
  if (n) {
    const std::vector<CUgraphNode> to(n, node);
    CU_CHECK(cuGraphAddDependencies_v2(graph, from.data(), to.data(), edgeData.data(), n));
  }
  cuStreamUpdateCaptureDependencies_v2(stream, &node, nullptr, 1, CU_STREAM_SET_CAPTURE_DEPENDENCIES);
  return node;
#else
  (void)stream, (void)f, (void)args;
  wb::throwDriverError(CUDA_ERROR_NOT_SUPPORTED, "edge data needs CUDA 12.3", __FILE__, __LINE__);
#endif
}

}  // namespace ex20
