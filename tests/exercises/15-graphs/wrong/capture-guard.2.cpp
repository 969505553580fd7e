// Wrong (R5): the destructor ends the capture but never destroys the graph it gets back
//
// "Ending the capture is what matters": a capture that was still active when the captured code
// threw returns a graph of what it recorded, which the guard now owns. One graph is left per guard:
// `left.empty()` fails ("1 graph more") after the captured code threw.
#include "exercises.hpp"

namespace ex15 {

CaptureGuard::CaptureGuard(CUstream stream, CUstreamCaptureMode mode) : stream_(stream) {
  CU_CHECK(cuStreamBeginCapture(stream, mode));
  capturing_ = true;
}

CaptureGuard::~CaptureGuard() {
  if (!capturing_) return;
  CUgraph graph = nullptr;
  cuStreamEndCapture(stream_, &graph);  // errors ignored: a destructor must not throw
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
