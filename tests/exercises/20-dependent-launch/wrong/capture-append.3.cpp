// Wrong (R3): adds the node to the stream's dependencies instead of replacing them
//
// CU_STREAM_ADD_CAPTURE_DEPENDENCIES (the default, 0) keeps the old dependencies beside the node: the
// stream's next kernel depends on the first kernel and on the node, so nothing orders it after the
// node alone ("depends on more or fewer nodes than yours").
#include "exercises.hpp"

#include <vector>

namespace ex20 {

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
  CU_CHECK(cuStreamUpdateCaptureDependencies_v2(stream, &node, nullptr, 1, CU_STREAM_ADD_CAPTURE_DEPENDENCIES));
  return node;
#else
  (void)stream, (void)f, (void)args;
  wb::throwDriverError(CUDA_ERROR_NOT_SUPPORTED, "edge data needs CUDA 12.3", __FILE__, __LINE__);
#endif
}

}  // namespace ex20
