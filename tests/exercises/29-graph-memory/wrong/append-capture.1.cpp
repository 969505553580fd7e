// Wrong (R1): begins the capture into the graph with no dependencies
//
// "The capture goes into the right graph, that is enough": its nodes are roots, so they may run
// before (or beside) the nodes they read from. The captured scale must depend on the fill node.
#include "exercises.hpp"

namespace ex29 {

void appendCaptured(CUgraph graph, const std::vector<CUgraphNode>&, CUstream stream,
                    const std::function<void(CUstream)>& work) {
#if CUDA_VERSION >= 12030
  CU_CHECK(cuStreamBeginCaptureToGraph(stream, graph, nullptr, nullptr, 0, CU_STREAM_CAPTURE_MODE_GLOBAL));
  CUgraph captured = nullptr;
  try {
    work(stream);
  } catch (...) {
    cuStreamEndCapture(stream, &captured);
    throw;
  }
  CU_CHECK(cuStreamEndCapture(stream, &captured));
#else
  (void)graph, (void)stream, (void)work;
#endif
}

}  // namespace ex29
