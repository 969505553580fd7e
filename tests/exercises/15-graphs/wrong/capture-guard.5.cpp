// Wrong (R1): begins every capture in GLOBAL mode, ignoring the mode it was given
//
// Copied from the lesson's captures, which all use CU_STREAM_CAPTURE_MODE_GLOBAL. A caller that
// asked for RELAXED, so that an allocation inside the captured code is allowed, gets a capture that
// forbids it: on driver 580 cuMemAlloc then fails with CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED and
// invalidates the capture, and `alloc == CUDA_SUCCESS` fails.
#include "exercises.hpp"

namespace ex15 {

CaptureGuard::CaptureGuard(CUstream stream, CUstreamCaptureMode mode) : stream_(stream) {
  (void)mode;
  CU_CHECK(cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL));
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
