// Wrong (R4): end() marks the capture over only after cuStreamEndCapture succeeded
//
// "capturing_ = false once it has ended": when the capture was invalidated, cuStreamEndCapture
// still ends it but returns an error, CU_CHECK throws, and the destructor ends the stream's capture
// a second time: the capture the caller began on the stream since then. `afterFailure ==
// CU_STREAM_CAPTURE_STATUS_ACTIVE` fails ("the guard's destructor ended a capture begun after end()").
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
  CUgraph graph = nullptr;
  const CUresult rc = cuStreamEndCapture(stream_, &graph);
  if (rc != CUDA_SUCCESS && graph) cuGraphDestroy(graph);
  CU_CHECK(rc);
  capturing_ = false;
  return graph;
}

}  // namespace ex15
