// Reference solutions of lesson 15's exercises.
#include "exercises.hpp"

#include <stdexcept>

namespace ex15 {

// The step is captured once: the graph's second node is the one whose b is the token. During the
// capture, cuStreamGetCaptureInfo names the nodes the next captured node would depend on: right
// after the second launch, that is the second launch's own node. run() gives the executable graph
// new parameters for that node (cuGraphExecKernelNodeSetParams copies the array and the values it
// points to, and a launch already enqueued keeps the parameters it was enqueued with), then
// launches. The template graph is never changed: an executable graph is a snapshot of it, so
// changing the graph's node (cuGraphKernelNodeSetParams) would change nothing that runs.
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
  CU_CHECK(rc);
  CU_CHECK(ended);
  if (!s_.addToken) {
    cuGraphDestroy(s_.graph);
    throw std::runtime_error("TokenStep: the capture did not end in one node");
  }
  rc = cuGraphInstantiate(&s_.exec, s_.graph, 0);
  if (rc != CUDA_SUCCESS) cuGraphDestroy(s_.graph);  // the destructor does not run for a constructor that throws
  CU_CHECK(rc);
}

// Destroying an executable graph whose launch is still running is allowed: the reference says it is
// freed once the launch completes.
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
  CU_CHECK(cuGraphExecKernelNodeSetParams(s_.exec, s_.addToken, &params));
  CU_CHECK(cuGraphLaunch(s_.exec, s_.stream));
}

CUgraphExec TokenStep::exec() const { return s_.exec; }

// cuGraphExecUpdate says in its return code whether the update was performed, and in resultInfo
// why not. CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE is the one refusal to handle (a changed topology, a
// node of another type, a change the driver cannot make in place): the old executable graph goes,
// the new graph is instantiated. It is not a sticky error: nothing else needs clearing.
ExecCache::~ExecCache() {
  if (exec_) cuGraphExecDestroy(exec_);
}

CUgraphExec ExecCache::apply(CUgraph graph) {
  if (exec_) {
    CUgraphExecUpdateResultInfo info{};
    const CUresult rc = cuGraphExecUpdate(exec_, graph, &info);
    if (rc == CUDA_SUCCESS) return exec_;
    if (rc != CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE) CU_CHECK(rc);
    CU_CHECK(cuGraphExecDestroy(exec_));
    exec_ = nullptr;
  }
  CU_CHECK(cuGraphInstantiate(&exec_, graph, 0));
  ++instantiations_;
  return exec_;
}

unsigned ExecCache::instantiations() const { return instantiations_; }

// A capture is ended by cuStreamEndCapture whatever its state: active, or invalidated by an
// operation the capture forbids (then it returns an error and no graph, and still takes the stream
// out of capture mode). So the destructor ends it unconditionally instead of asking first. end()
// marks the capture over before it looks at the result, so a throwing end() is not ended twice.
CaptureGuard::CaptureGuard(CUstream stream, CUstreamCaptureMode mode) : stream_(stream) {
  CU_CHECK(cuStreamBeginCapture(stream, mode));
  capturing_ = true;
}

CaptureGuard::~CaptureGuard() {
  if (!capturing_) return;
  CUgraph graph = nullptr;
  cuStreamEndCapture(stream_, &graph);  // errors ignored: a destructor must not throw
  if (graph) cuGraphDestroy(graph);
}

CUgraph CaptureGuard::end() {
  capturing_ = false;
  CUgraph graph = nullptr;
  const CUresult rc = cuStreamEndCapture(stream_, &graph);
  if (rc != CUDA_SUCCESS && graph) cuGraphDestroy(graph);
  CU_CHECK(rc);
  return graph;
}

}  // namespace ex15
