// Wrong (R2): makes ctx current with cuCtxSetCurrent and cleans up with cuCtxSetCurrent(nullptr)
//
// On an empty stack that is right. With the caller's context on the stack, cuCtxSetCurrent(ctx)
// replaces it and cuCtxSetCurrent(nullptr) pops ctx: the stack is empty and the caller's context is
// gone from it. The check's `afterCallers == "[caller's]"` fails.
#include "exercises.hpp"

namespace ex03 {

namespace {

// Leaves no context current at scope exit.
struct ClearAtExit {
  ~ClearAtExit() { cuCtxSetCurrent(nullptr); }
};

}  // namespace

void withContext(CUcontext ctx, const std::function<void()>& work) {
  CU_CHECK(cuCtxSetCurrent(ctx));
  ClearAtExit clear;
  work();
}

}  // namespace ex03
