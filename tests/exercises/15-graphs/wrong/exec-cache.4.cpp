// Wrong (R4): treats every error of cuGraphExecUpdate as a refusal and instantiates anew
//
// "If the update did not work, instantiate": an error that is not
// CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE (here an injected CUDA_ERROR_OUT_OF_MEMORY) says nothing
// about the graphs, and must reach the caller; this apply() hides it, replaces the executable graph
// and counts a fourth instantiation: `threw` fails ("an error other than the refusal was not thrown").
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
    CU_CHECK(cuGraphExecDestroy(exec_));
    exec_ = nullptr;
  }
  CU_CHECK(cuGraphInstantiate(&exec_, graph, 0));
  ++instantiations_;
  return exec_;
}

unsigned ExecCache::instantiations() const { return instantiations_; }

}  // namespace ex15
