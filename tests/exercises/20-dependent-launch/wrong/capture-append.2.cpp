// Wrong (R2): adds the node on the capture's dependencies with cuGraphAddKernelNode, dropping their edge data
//
// cuGraphAddKernelNode takes dependencies but no edge data: every edge it makes is a plain one. The
// first dependency was programmatic and the node's edge from it is not: "your node's dependency lost its
// programmatic edge data".
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
  CU_CHECK(cuGraphAddKernelNode(&node, graph, from.data(), n, &params));
  (void)edgeData;
  CU_CHECK(cuStreamUpdateCaptureDependencies_v2(stream, &node, nullptr, 1, CU_STREAM_SET_CAPTURE_DEPENDENCIES));
  return node;
#else
  (void)stream, (void)f, (void)args;
  wb::throwDriverError(CUDA_ERROR_NOT_SUPPORTED, "edge data needs CUDA 12.3", __FILE__, __LINE__);
#endif
}

}  // namespace ex20
