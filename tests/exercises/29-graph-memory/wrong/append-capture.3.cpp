// Wrong (R3): lets work's exception through without ending the capture
//
// "An exception unwinds everything": not a capture. The stream stays capturing, and every later use
// of it is captured into (or refused by) a capture nobody will end.
#include "exercises.hpp"

namespace ex29 {

void appendCaptured(CUgraph graph, const std::vector<CUgraphNode>& after, CUstream stream,
                    const std::function<void(CUstream)>& work) {
#if CUDA_VERSION >= 12030
  CU_CHECK(cuStreamBeginCaptureToGraph(stream, graph, after.empty() ? nullptr : after.data(), nullptr, after.size(),
                                       CU_STREAM_CAPTURE_MODE_GLOBAL));
  work(stream);
  CUgraph captured = nullptr;
  CU_CHECK(cuStreamEndCapture(stream, &captured));
#else
  (void)graph, (void)after, (void)stream, (void)work;
#endif
}

}  // namespace ex29
