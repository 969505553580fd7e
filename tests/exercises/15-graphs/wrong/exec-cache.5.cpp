// Wrong (R6): destroys each graph it instantiates, as if the executable graph took it over
//
// "The executable graph is a snapshot: the graph is no longer needed". The caller keeps ownership of
// the graphs it passes (and destroys them itself). After the first apply() the process holds one
// graph fewer than the check made: `graphsHeld == kGraphs` fails ("apply() destroyed a graph it
// was given").
#include "exercises.hpp"

namespace ex15 {

ExecCache::~ExecCache() {
  if (exec_) cuGraphExecDestroy(exec_);
}

CUgraphExec ExecCache::apply(CUgraph graph) {
  if (exec_) {
    CUgraphExecUpdateResultInfo info{};
    const CUresult rc = cuGraphExecUpdate(exec_, graph, &info);
    if (rc == CUDA_SUCCESS) return exec_;
    if (rc != CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE) CU_CHECK(rc);
    CU_CHECK(cuGraphExecDestroy(exec_));
    exec_ = nullptr;
  }
  CU_CHECK(cuGraphInstantiate(&exec_, graph, 0));
  CU_CHECK(cuGraphDestroy(graph));
  ++instantiations_;
  return exec_;
}

unsigned ExecCache::instantiations() const { return instantiations_; }

}  // namespace ex15
