// Wrong (R1): captures the token's kernel first and the doubling second
//
// "Add the token, then double": the step reads the same, but the order of the two kernels is the
// step's meaning. From zeros, the tokens 1 to 5 leave 2, 8, 22, 52, 114 instead of 1, 4, 11, 26,
// 57: in "R1 R2 R3 R4 R5: five tokens run back to back ...", `wrong == 0` fails ("elements that are
// not 57").
#include "exercises.hpp"

#include <stdexcept>

namespace ex15 {

// The step is captured once: the graph's second node is the one whose b is the token. During the
// capture, cuStreamGetCaptureInfo names the nodes the next captured node would depend on: right
// after the second launch, that is the second launch's own node. A capture that was begun is always
// ended, also when a launch in it was refused, and the graph that comes back is destroyed when the
// constructor throws: no destructor runs for an object whose constructor threw.
TokenStep::TokenStep(CUfunction axpb, CUdeviceptr data, unsigned n, CUstream stream) {
  s_.data = data;
  s_.n = n;
  s_.stream = stream;
  float two = 2.0f, one = 1.0f, zero = 0.0f;
  void* doubleIt[] = {&data, &n, &two, &zero};
  void* addToken[] = {&data, &n, &one, &zero};
  CU_CHECK(cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL));
  // The token first, then the doubling: "x + token, times 2".
  CUresult rc = cuLaunchKernel(axpb, kBlocks, 1, 1, kThreads, 1, 1, 0, stream, addToken, nullptr);
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  const CUgraphNode* last = nullptr;
  size_t count = 0;
  if (rc == CUDA_SUCCESS) rc = wb::streamCaptureInfo(stream, &status, nullptr, nullptr, &last, &count);
  if (rc == CUDA_SUCCESS && count == 1) s_.addToken = last[0];  // copied: the array lives until the next call
  if (rc == CUDA_SUCCESS) rc = cuLaunchKernel(axpb, kBlocks, 1, 1, kThreads, 1, 1, 0, stream, doubleIt, nullptr);
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

// Destroying an executable graph whose launch is still running is allowed: the reference says it is
// freed once the launch completes.
TokenStep::~TokenStep() {
  if (s_.exec) cuGraphExecDestroy(s_.exec);
  if (s_.graph) cuGraphDestroy(s_.graph);
}

// run() gives the executable graph new parameters for that node (cuGraphExecKernelNodeSetParams
// copies the array and the values it points to, and a launch already enqueued keeps the parameters
// it was enqueued with), then launches. The template graph is never changed: an executable graph is
// a snapshot of it, so changing the graph's node (cuGraphKernelNodeSetParams) would change nothing
// that runs.
void TokenStep::run(float token) {
  CUDA_KERNEL_NODE_PARAMS params{};
  CU_CHECK(cuGraphKernelNodeGetParams(s_.addToken, &params));  // function, shape: as captured
  CUdeviceptr data = s_.data;
  unsigned n = s_.n;
  float one = 1.0f;
  void* args[] = {&data, &n, &one, &token};
  params.kernelParams = args;
  params.extra = nullptr;
  CU_CHECK(cuGraphExecKernelNodeSetParams(s_.exec, s_.addToken, &params));
  CU_CHECK(cuGraphLaunch(s_.exec, s_.stream));
}

CUgraphExec TokenStep::exec() const { return s_.exec; }

}  // namespace ex15
