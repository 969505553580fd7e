// Wrong (R2): asks the capture for its dependencies without their edge data
//
// Code written against CUDA 12.2's cuStreamGetCaptureInfo passes no edge data and adds the node with
// default edges. With a programmatic dependency the driver refuses such a query with
// CUDA_ERROR_LOSSY_QUERY: appendToCapture throws in the first case, which fails.
#include "exercises.hpp"

#include <vector>

namespace ex20 {

CUgraphNode appendToCapture(CUstream stream, CUfunction f, void** args) {
#if CUDA_VERSION >= 12030
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  CUgraph graph = nullptr;
  const CUgraphNode* deps = nullptr;
  size_t n = 0;
  CU_CHECK(cuStreamGetCaptureInfo_v3(stream, &status, nullptr, &graph, &deps, nullptr, &n));
  if (status != CU_STREAM_CAPTURE_STATUS_ACTIVE)
    wb::throwDriverError(CUDA_ERROR_ILLEGAL_STATE, "appendToCapture: the stream is not capturing", __FILE__, __LINE__);
  const std::vector<CUgraphNode> from(deps, deps + n);
  const std::vector<CUgraphEdgeData> edgeData(n, CUgraphEdgeData{});  // no data asked for: default edges
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
  CU_CHECK(cuStreamUpdateCaptureDependencies_v2(stream, &node, nullptr, 1, CU_STREAM_SET_CAPTURE_DEPENDENCIES));
  return node;
#else
  (void)stream, (void)f, (void)args;
  wb::throwDriverError(CUDA_ERROR_NOT_SUPPORTED, "edge data needs CUDA 12.3", __FILE__, __LINE__);
#endif
}

}  // namespace ex20
