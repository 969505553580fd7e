// Wrong (R6): keeps only the second launch's result, so a refused first launch goes unnoticed
//
// "rc holds the capture's result": each launch assigns it, and the second overwrites what the
// first said. When the first launch is refused, the capture holds the token's kernel alone, ends
// cleanly and is instantiated: a step that never doubles, and no error. In "R6: the first or the
// second launch refused during the capture ...", the refused first launch constructs a TokenStep:
// `r.threw` fails.
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
  CUresult rc = cuLaunchKernel(axpb, kBlocks, 1, 1, kThreads, 1, 1, 0, stream, doubleIt, nullptr);
  rc = cuLaunchKernel(axpb, kBlocks, 1, 1, kThreads, 1, 1, 0, stream, addToken, nullptr);  // the first's result is gone
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
