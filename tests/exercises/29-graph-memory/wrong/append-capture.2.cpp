// Wrong (R1): depends on the last node of `after` only
//
// "The last node given is the one that runs last": two nodes given are two branches, neither after
// the other. The captured node must depend on both.
#include "exercises.hpp"

namespace ex29 {

void appendCaptured(CUgraph graph, const std::vector<CUgraphNode>& after, CUstream stream,
                    const std::function<void(CUstream)>& work) {
#if CUDA_VERSION >= 12030
  const CUgraphNode* last = after.empty() ? nullptr : &after.back();
  CU_CHECK(cuStreamBeginCaptureToGraph(stream, graph, last, nullptr, last ? 1 : 0, CU_STREAM_CAPTURE_MODE_GLOBAL));
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
#endif
}

}  // namespace ex29
