// Wrong (R5): the destructor checks cuStreamEndCapture with CU_CHECK
//
// "Check every call": ending an invalidated capture returns an error, so the destructor throws, and
// a destructor is noexcept: std::terminate ends the process while the captured code's own exception
// is on its way out. The check crashes in the case where a synchronising call invalidated the capture.
#include "exercises.hpp"

namespace ex15 {

CaptureGuard::CaptureGuard(CUstream stream, CUstreamCaptureMode mode) : stream_(stream) {
  CU_CHECK(cuStreamBeginCapture(stream, mode));
  capturing_ = true;
}

CaptureGuard::~CaptureGuard() {
  if (!capturing_) return;
  CUgraph graph = nullptr;
  CU_CHECK(cuStreamEndCapture(stream_, &graph));
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
