// Wrong (R4): decides by the update's result info alone, not by what cuGraphExecUpdate returned
//
// "CUgraphExecUpdateResultInfo says why an update failed, so it says whether it did": for a
// refusal it does, but an error that is not a refusal (out of memory, an invalid value) may leave
// the info as it was, CU_GRAPH_EXEC_UPDATE_SUCCESS, and apply() returns an executable graph that
// still runs the previous graph. In "R1 R2 R3 R4 R5 R6: six captures ...", the injected
// CUDA_ERROR_OUT_OF_MEMORY returns: `threw` fails.
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
  if (exec_) {
    CUgraphExecUpdateResultInfo info{};
    cuGraphExecUpdate(exec_, graph, &info);  // info says whether it worked
    if (info.result == CU_GRAPH_EXEC_UPDATE_SUCCESS) return exec_;
    CU_CHECK(cuGraphExecDestroy(exec_));
    exec_ = nullptr;
  }
  CU_CHECK(cuGraphInstantiate(&exec_, graph, 0));
  ++instantiations_;
  return exec_;
}

unsigned ExecCache::instantiations() const { return instantiations_; }

}  // namespace ex15
