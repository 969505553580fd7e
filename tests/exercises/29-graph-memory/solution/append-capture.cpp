// Reference solution of lesson 29's exercise append-capture (lessons/29-graph-memory/exercises.cpp).
#include "exercises.hpp"

namespace ex29 {

// The capture places its nodes into the caller's graph; its first node depends on every node given
// (NULL edge data: default edges). Whatever happens in work, the capture is ended, so the stream is
// usable again; a failed end (an invalidated capture) is the caller's error to see. The graph the
// end returns is the caller's: nothing is destroyed here.
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
  CU_CHECK(cuStreamEndCapture(stream, &captured));
#else
  (void)graph, (void)after, (void)stream, (void)work;
  wb::throwDriverError(CUDA_ERROR_NOT_SUPPORTED, "cuStreamBeginCaptureToGraph (CUDA 12.3)", __FILE__, __LINE__);
#endif
}

}  // namespace ex29
