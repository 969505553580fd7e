// Wrong (R4): ends the capture without looking at what cuStreamEndCapture returned
//
// "Ending a capture cannot fail": an invalidated capture ends with an error and a NULL graph, and
// the caller's graph then lacks the work it believes it appended.
#include "exercises.hpp"

namespace ex29 {

void appendCaptured(CUgraph graph, const std::vector<CUgraphNode>& after, CUstream stream,
                    const std::function<void(CUstream)>& work) {
#if CUDA_VERSION >= 12030
  CU_CHECK(cuStreamBeginCaptureToGraph(stream, graph, after.empty() ? nullptr : after.data(), nullptr, after.size(),
                                       CU_STREAM_CAPTURE_MODE_GLOBAL));
  CUgraph captured = nullptr;
  try {
    work(stream);
  } catch (...) {
    cuStreamEndCapture(stream, &captured);
    throw;
  }
  cuStreamEndCapture(stream, &captured);
#else
  (void)graph, (void)after, (void)stream, (void)work;
#endif
}

}  // namespace ex29
