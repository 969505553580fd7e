// Wrong (R3): catches whatever work throws and returns, "a failed probe must not take the service down"
//
// The context is destroyed and the stack is right, but the caller cannot tell a probe that failed
// from one that passed: the work's exception never reaches it. The check's `caught == 9` fails.
#include "exercises.hpp"

namespace ex03 {

namespace {

// Destroys at scope exit. cuCtxDestroy also pops the context where it is current, which gives the
// caller's stack back as it was.
struct DestroyAtExit {
  CUcontext ctx;
  ~DestroyAtExit() { cuCtxDestroy(ctx); }
};

}  // namespace

// cuCtxCreate pushes the new context; cuCtxDestroy gives back its device memory and pops it. A pop
// alone would free nothing (the context and all it holds live until destroyed), and a probe run
// again and again would take that memory again on every run. A creation that fails made nothing and
// pushed nothing: its refusal is thrown before work could run in whatever the caller has current.
void withPrivateContext(CUdevice dev, const std::function<void()>& work) {
  CUcontext ctx = nullptr;
  CU_CHECK(wb::createContext(&ctx, 0, dev));
  DestroyAtExit destroy{ctx};
  try {
    work();
  } catch (...) {
    // the probe failed: it has its own report; the service goes on
  }
}

}  // namespace ex03
