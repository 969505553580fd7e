// Wrong (R2): captures into a graph of its own and adds that as a child graph node
//
// The way before CUDA 12.3: the work runs, after the right nodes, but inside a child graph. The
// engine asked for the captured nodes in its own graph, where it can keep their handles and change
// them in its executable graph; a child graph node gives it one opaque node instead.
#include "exercises.hpp"

namespace ex29 {

void appendCaptured(CUgraph graph, const std::vector<CUgraphNode>& after, CUstream stream,
                    const std::function<void(CUstream)>& work) {
  CU_CHECK(cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL));
  CUgraph sub = nullptr;
  try {
    work(stream);
  } catch (...) {
    cuStreamEndCapture(stream, &sub);
    if (sub) cuGraphDestroy(sub);
    throw;
  }
  CU_CHECK(cuStreamEndCapture(stream, &sub));
  CUgraphNode child = nullptr;
  const CUgraphNode* deps = after.empty() ? nullptr : after.data();
  const CUresult rc = cuGraphAddChildGraphNode(&child, graph, deps, after.size(), sub);
  cuGraphDestroy(sub);  // the node holds a clone
  CU_CHECK(rc);
}

}  // namespace ex29
