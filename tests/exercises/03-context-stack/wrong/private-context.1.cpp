// Wrong (R2): pops the context instead of destroying it, "popping releases it"
//
// The stack comes back right, even when work throws, but the context and its device memory stay:
// the check's `left == ""` (1 context more) and `after == before` fail by what a context costs.
#include "exercises.hpp"

namespace ex03 {

namespace {

// Pops at scope exit, by return or by exception.
struct PopAtExit {
  ~PopAtExit() {
    CUcontext popped = nullptr;
    cuCtxPopCurrent(&popped);
  }
};

}  // namespace

void withPrivateContext(CUdevice dev, const std::function<void()>& work) {
  CUcontext ctx = nullptr;
  CU_CHECK(wb::createContext(&ctx, 0, dev));
  PopAtExit pop;
  work();
}

}  // namespace ex03
