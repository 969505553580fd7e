// Wrong (R2): never updates: destroys the executable graph and instantiates every graph it is given
//
// "A new capture needs a new instantiation": always right, and the cost the exercise is about. Five
// graphs make five instantiations: `made == 3` and `instantiatedCalls == 3` fail (and the handle of
// a same-topology graph changes, unless the driver hands the freed address out again).
#include "exercises.hpp"

namespace ex15 {

ExecCache::~ExecCache() {
  if (exec_) cuGraphExecDestroy(exec_);
}

CUgraphExec ExecCache::apply(CUgraph graph) {
  if (exec_) {
    CU_CHECK(cuGraphExecDestroy(exec_));
    exec_ = nullptr;
  }
  CU_CHECK(cuGraphInstantiate(&exec_, graph, 0));
  ++instantiations_;
  return exec_;
}

unsigned ExecCache::instantiations() const { return instantiations_; }

}  // namespace ex15
