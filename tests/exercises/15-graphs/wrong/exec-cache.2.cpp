// Wrong (R3): when the update is refused, instantiates the new graph without destroying the old executable graph
//
// "Replace the handle": exec_ is overwritten by the new instantiation, and the executable graph it
// held is never destroyed. After the third apply() the process holds two executable graphs for the
// cache's one: `execsHeld == 1` fails ("1 executable graph more").
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
  }
  CU_CHECK(cuGraphInstantiate(&exec_, graph, 0));
  ++instantiations_;
  return exec_;
}

unsigned ExecCache::instantiations() const { return instantiations_; }

}  // namespace ex15
