// Wrong (R1): calls cuGraphExecUpdate and returns the executable graph without looking at the result
//
// "cuGraphExecUpdate updates the executable graph". The update of the graph with one kernel more is
// refused, and the executable graph goes on running the previous graph: after the third apply() the
// launch leaves 2 where 7 was due (`value == expected` fails), and only one instantiation is counted
// (`made == 3` fails).
#include "exercises.hpp"

namespace ex15 {

ExecCache::~ExecCache() {
  if (exec_) cuGraphExecDestroy(exec_);
}

CUgraphExec ExecCache::apply(CUgraph graph) {
  if (exec_) {
    CUgraphExecUpdateResultInfo info{};
    cuGraphExecUpdate(exec_, graph, &info);
    return exec_;
  }
  CU_CHECK(cuGraphInstantiate(&exec_, graph, 0));
  ++instantiations_;
  return exec_;
}

unsigned ExecCache::instantiations() const { return instantiations_; }

}  // namespace ex15
