// Wrong (R2): gives the graph's node the token (cuGraphKernelNodeSetParams), then launches the executable graph
//
// "Set the node's parameters, then launch": cuGraphKernelNodeSetParams changes the CUgraph, but the
// executable graph is a snapshot taken at cuGraphInstantiate, so every launch still adds the token 0
// it was captured with. The elements end at 0, not 57: `wrong == 0` fails ("elements that are not 57").
#include "exercises.hpp"

#include <stdexcept>

namespace ex15 {

TokenStep::TokenStep(CUfunction axpb, CUdeviceptr data, unsigned n, CUstream stream) {
  s_.data = data;
  s_.n = n;
  s_.stream = stream;
  float two = 2.0f, one = 1.0f, zero = 0.0f;
  void* doubleIt[] = {&data, &n, &two, &zero};
  void* addToken[] = {&data, &n, &one, &zero};
  CU_CHECK(cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL));
  CUresult rc = cuLaunchKernel(axpb, kBlocks, 1, 1, kThreads, 1, 1, 0, stream, doubleIt, nullptr);
  if (rc == CUDA_SUCCESS) rc = cuLaunchKernel(axpb, kBlocks, 1, 1, kThreads, 1, 1, 0, stream, addToken, nullptr);
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  const CUgraphNode* last = nullptr;
  size_t count = 0;
  if (rc == CUDA_SUCCESS) rc = wb::streamCaptureInfo(stream, &status, nullptr, nullptr, &last, &count);
  if (rc == CUDA_SUCCESS && count == 1) s_.addToken = last[0];  // copied: the array lives until the next call
  const CUresult ended = cuStreamEndCapture(stream, &s_.graph);  // always end what was begun
  try {
    CU_CHECK(rc);
    CU_CHECK(ended);
    if (!s_.addToken) throw std::runtime_error("TokenStep: the capture did not end in one node");
    CU_CHECK(cuGraphInstantiate(&s_.exec, s_.graph, 0));
  } catch (...) {
    if (s_.graph) cuGraphDestroy(s_.graph);
    throw;
  }
}

TokenStep::~TokenStep() {
  if (s_.exec) cuGraphExecDestroy(s_.exec);
  if (s_.graph) cuGraphDestroy(s_.graph);
}

void TokenStep::run(float token) {
  CUDA_KERNEL_NODE_PARAMS params{};
  CU_CHECK(cuGraphKernelNodeGetParams(s_.addToken, &params));  // function, shape: as captured
  CUdeviceptr data = s_.data;
  unsigned n = s_.n;
  float one = 1.0f;
  void* args[] = {&data, &n, &one, &token};
  params.kernelParams = args;
  params.extra = nullptr;
  CU_CHECK(cuGraphKernelNodeSetParams(s_.addToken, &params));
  CU_CHECK(cuGraphLaunch(s_.exec, s_.stream));
}

CUgraphExec TokenStep::exec() const { return s_.exec; }

}  // namespace ex15
