// Wrong (R4): does not look at the capture status before using the graph
//
// The status "is always ACTIVE where this is called". On a stream that is not capturing the graph the
// query gives is not valid (the reference returns valid data only for ACTIVE), adding the node is
// refused with another code, and the caller cannot tell why: the code is not CUDA_ERROR_ILLEGAL_STATE.
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
  (void)status;
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
  CU_CHECK(cuStreamUpdateCaptureDependencies_v2(stream, &node, nullptr, 1, CU_STREAM_SET_CAPTURE_DEPENDENCIES));
  return node;
#else
  (void)stream, (void)f, (void)args;
  wb::throwDriverError(CUDA_ERROR_NOT_SUPPORTED, "edge data needs CUDA 12.3", __FILE__, __LINE__);
#endif
}

}  // namespace ex20
