// Reference solution of lesson 15's exercise capture-guard (lessons/15-graphs/exercises.cpp).
#include "exercises.hpp"

namespace ex15 {

// A capture is ended by cuStreamEndCapture whatever its state: active, or invalidated by an
// operation the capture forbids (then it returns an error and no graph, and still takes the stream
// out of capture mode). So the destructor ends it unconditionally instead of asking first, and
// destroys the graph an active capture gives back. end() marks the capture over before it looks at
// the result, so neither a throwing end() nor a successful one is followed by a second
// cuStreamEndCapture, which would end whatever capture the caller began on the stream since.
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
