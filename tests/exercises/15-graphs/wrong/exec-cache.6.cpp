// Wrong (R5): counts every apply(), updated in place or instantiated
//
// "Each graph given is one more instantiation's worth": the counter goes up before apply() knows
// whether the update will do. The executable graphs are right and three cuGraphInstantiate calls
// are made, but after five graphs instantiations() says 5: in "R1 R2 R3 R4 R5 R6: six captures
// ...", `made == 3` fails.
#include "exercises.hpp"

namespace ex15 {

// cuGraphExecUpdate says in its return code whether the update was performed, and in resultInfo
// why not. CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE is the one refusal to handle (a changed topology, a
// node of another type, a change the driver cannot make in place): the old executable graph goes,
// the new graph is instantiated. It is not a sticky error: nothing else needs clearing. Any other
// code is thrown before anything is destroyed, so the executable graph stays as it was. The graphs
// stay the caller's: an executable graph does not need its graph once instantiated or updated.
ExecCache::~ExecCache() {
  if (exec_) cuGraphExecDestroy(exec_);
}

CUgraphExec ExecCache::apply(CUgraph graph) {
  ++instantiations_;  // "one more graph brought into the cache"
  if (exec_) {
    CUgraphExecUpdateResultInfo info{};
    const CUresult rc = cuGraphExecUpdate(exec_, graph, &info);
    if (rc == CUDA_SUCCESS) return exec_;
    if (rc != CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE) CU_CHECK(rc);
    CU_CHECK(cuGraphExecDestroy(exec_));
    exec_ = nullptr;
  }
  CU_CHECK(cuGraphInstantiate(&exec_, graph, 0));
  return exec_;
}

unsigned ExecCache::instantiations() const { return instantiations_; }

}  // namespace ex15
