// Deliberately wrong variants of lesson 15's exercises: each check must fail on them.
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
  if (rc == CUDA_SUCCESS && count == 1) s_.addToken = last[0];
  const CUresult ended = cuStreamEndCapture(stream, &s_.graph);
  CU_CHECK(rc);
  CU_CHECK(ended);
  if (!s_.addToken) throw std::runtime_error("TokenStep: the capture did not end in one node");
  CU_CHECK(cuGraphInstantiate(&s_.exec, s_.graph, 0));
}

TokenStep::~TokenStep() {
  if (s_.exec) cuGraphExecDestroy(s_.exec);
  if (s_.graph) cuGraphDestroy(s_.graph);
}

// Wrong: "set the node's parameters, then launch": cuGraphKernelNodeSetParams changes the graph's
// node, but the executable graph is a snapshot taken at cuGraphInstantiate, so every launch still
// adds the token 0 it was captured with. The elements end at 0, not 57, and
// `wrong == 0` fails ("elements that are not 57").
void TokenStep::run(float token) {
  CUDA_KERNEL_NODE_PARAMS params{};
  CU_CHECK(cuGraphKernelNodeGetParams(s_.addToken, &params));
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

ExecCache::~ExecCache() {
  if (exec_) cuGraphExecDestroy(exec_);
}

// Wrong: "cuGraphExecUpdate updates the executable graph", its result never looked at. The update of
// the graph with one kernel more is refused, and the executable graph goes on running the previous
// graph: after the third apply() the launch leaves 2 where 7 was due (`value == expected` fails), and
// only one instantiation is counted (`made == 3` fails).
CUgraphExec ExecCache::apply(CUgraph graph) {
  if (exec_) {
    CUgraphExecUpdateResultInfo info{};
    cuGraphExecUpdate(exec_, graph, &info);
    return exec_;
  }
  CU_CHECK(cuGraphInstantiate(&exec_, graph, 0));
  ++instantiations_;
  return exec_;
}

unsigned ExecCache::instantiations() const { return instantiations_; }

CaptureGuard::CaptureGuard(CUstream stream, CUstreamCaptureMode mode) : stream_(stream) {
  CU_CHECK(cuStreamBeginCapture(stream, mode));
  capturing_ = true;
}

// Wrong: "end the capture only if the stream is still capturing", asking cuStreamIsCapturing for
// CU_STREAM_CAPTURE_STATUS_ACTIVE first. A capture invalidated by a synchronising call reports
// CU_STREAM_CAPTURE_STATUS_INVALIDATED, which this destructor leaves alone: the stream stays in
// capture mode, the next launch into it fails, and `statusOf(s.get()) == CU_STREAM_CAPTURE_STATUS_NONE`
// fails after the invalidated capture threw.
CaptureGuard::~CaptureGuard() {
  if (!capturing_) return;
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  if (cuStreamIsCapturing(stream_, &status) != CUDA_SUCCESS || status != CU_STREAM_CAPTURE_STATUS_ACTIVE) return;
  CUgraph graph = nullptr;
  cuStreamEndCapture(stream_, &graph);
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
