// Wrong (R2): pushes ctx, then "restores" with cuCtxSetCurrent(the context that was current before)
//
// cuCtxSetCurrent replaces the top of the stack, it does not pop: [caller's ctx] becomes [caller's
// caller's], one context too many. On an empty stack it happens to work (cuCtxSetCurrent(NULL)
// pops). The check's `afterCallers == "[caller's]"` fails.
#include "exercises.hpp"

namespace ex03 {

namespace {

// Makes the context that was current before current again at scope exit.
struct RestoreAtExit {
  CUcontext previous;
  ~RestoreAtExit() { cuCtxSetCurrent(previous); }
};

}  // namespace

void withContext(CUcontext ctx, const std::function<void()>& work) {
  CUcontext previous = nullptr;
  CU_CHECK(cuCtxGetCurrent(&previous));
  CU_CHECK(cuCtxPushCurrent(ctx));
  RestoreAtExit restore{previous};
  work();
}

}  // namespace ex03
