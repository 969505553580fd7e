// Wrong (R5): re-instantiates on any error of cuGraphExecUpdate
//
// Every failure is taken for a refusal: a real error (an invalid handle, a lost context) is hidden
// behind a new executable graph.
#include "exercises.hpp"

namespace ex31 {

namespace {
// The step at pos, captured from launchStep into a new graph.
CUgraph captureStep(const Chain& c, unsigned pos, CUstream s) {
  CU_CHECK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
  try {
    launchStep(c, pos, s);
  } catch (...) {
    CUgraph broken = nullptr;
    if (cuStreamEndCapture(s, &broken) == CUDA_SUCCESS && broken) cuGraphDestroy(broken);
    throw;
  }
  CUgraph graph = nullptr;
  CU_CHECK(cuStreamEndCapture(s, &graph));
  return graph;
}
}  // namespace

// Set when the held graph has the step's shape and its nodes may be set; otherwise a fresh capture
// and cuGraphExecUpdate; where the driver refuses the update, its documented fallback: a new
// executable graph from the fresh capture. Every handle g holds is valid at every exit.
Took prepareStep(StepGraph& g, const Chain& c, unsigned pos, CUstream s, bool setNodes,
                 CUgraphExecUpdateResult* refused) {
  if (g.exec && setNodes && g.nodes.size() == kernelsAt(c, pos)) {
    setStep(g.exec, g.nodes, c, pos);
    return Took::Set;
  }
  CUgraph fresh = captureStep(c, pos, s);
  if (!g.exec) {
    CUgraphExec exec = nullptr;
    const CUresult rc = cuGraphInstantiate(&exec, fresh, 0);
    if (rc != CUDA_SUCCESS) cuGraphDestroy(fresh);
    CU_CHECK(rc);
    g.graph = fresh, g.exec = exec, g.nodes = chainNodes(fresh);
    return Took::Instantiated;
  }
  CUgraphExecUpdateResultInfo info{};
  const CUresult rc = cuGraphExecUpdate(g.exec, fresh, &info);
  if (rc == CUDA_SUCCESS) {  // exec now runs the fresh parameters; its nodes are still g.graph's
    CU_CHECK(cuGraphDestroy(fresh));
    return Took::Updated;
  }
  if (false) {
    cuGraphDestroy(fresh);
    CU_CHECK(rc);
  }
  if (refused) *refused = info.result;
  CUgraphExec exec = nullptr;
  const CUresult made = cuGraphInstantiate(&exec, fresh, 0);
  if (made != CUDA_SUCCESS) cuGraphDestroy(fresh);  // g keeps the old graph and exec, still valid
  CU_CHECK(made);
  CU_CHECK(cuGraphExecDestroy(g.exec));  // a launch in flight finishes first: "freed asynchronously"
  CU_CHECK(cuGraphDestroy(g.graph));
  g.graph = fresh, g.exec = exec, g.nodes = chainNodes(fresh);
  return Took::Reinstantiated;
}

void releaseStepGraph(StepGraph& g) {
  if (g.exec) CU_CHECK(cuGraphExecDestroy(g.exec));
  if (g.graph) CU_CHECK(cuGraphDestroy(g.graph));
  g = StepGraph{};
}

}  // namespace ex31
