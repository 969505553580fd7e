// Wrong (R3): end() returns the graph it got, NULL for a failed capture, without throwing
//
// "A NULL graph tells the caller that the capture failed": the error is lost, and a caller that
// instantiates the result gets a second, unrelated error. `CHECK_THROWS_AS(guard.end(),
// wb::DriverError)` fails for the invalidated capture.
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
  if (graph) cuGraphDestroy(graph);
}

CUgraph CaptureGuard::end() {
  capturing_ = false;
  CUgraph graph = nullptr;
  const CUresult rc = cuStreamEndCapture(stream_, &graph);
  if (rc != CUDA_SUCCESS && graph) {
    cuGraphDestroy(graph);
    graph = nullptr;
  }
  return graph;
}

}  // namespace ex15
