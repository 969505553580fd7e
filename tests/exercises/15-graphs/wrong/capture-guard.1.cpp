// Wrong (R5): the destructor ends the capture only if cuStreamIsCapturing says it is still ACTIVE
//
// "End the capture only if the stream is still capturing". A capture invalidated by a synchronising
// call reports CU_STREAM_CAPTURE_STATUS_INVALIDATED, which this destructor leaves alone: the stream
// stays in capture mode, and `statusOf(s.get()) == CU_STREAM_CAPTURE_STATUS_NONE` fails after the
// invalidated capture threw.
#include "exercises.hpp"

namespace ex15 {

CaptureGuard::CaptureGuard(CUstream stream, CUstreamCaptureMode mode) : stream_(stream) {
  CU_CHECK(cuStreamBeginCapture(stream, mode));
  capturing_ = true;
}

CaptureGuard::~CaptureGuard() {
  if (!capturing_) return;
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  if (cuStreamIsCapturing(stream_, &status) != CUDA_SUCCESS || status != CU_STREAM_CAPTURE_STATUS_ACTIVE) return;
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
