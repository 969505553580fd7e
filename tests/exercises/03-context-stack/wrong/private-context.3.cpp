// Wrong (R4): destroys the context, then pops "to give the caller its context back"
//
// cuCtxDestroy already popped it, as it was current: the pop takes the caller's own context off the
// stack. `stackAfter == "[caller's]"` fails (the stack is empty).
#include "exercises.hpp"

namespace ex03 {

namespace {

// Destroys at scope exit, then pops.
struct DestroyAtExit {
  CUcontext ctx;
  ~DestroyAtExit() {
    cuCtxDestroy(ctx);
    CUcontext popped = nullptr;
    cuCtxPopCurrent(&popped);
  }
};

}  // namespace

void withPrivateContext(CUdevice dev, const std::function<void()>& work) {
  CUcontext ctx = nullptr;
  CU_CHECK(wb::createContext(&ctx, 0, dev));
  DestroyAtExit destroy{ctx};
  work();
}

}  // namespace ex03
