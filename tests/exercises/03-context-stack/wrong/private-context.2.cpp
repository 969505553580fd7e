// Wrong (R2 R4): destroys the context in a statement after work(), so a throwing work leaves it behind
//
// Right while work returns. When it throws, cuCtxDestroy is skipped: the context stays, pushed on
// the caller's stack above the caller's own. `stackAfterThrow == "[caller's]"`, `leftAfterThrow ==
// ""` and `afterThrow == before` fail.
#include "exercises.hpp"

namespace ex03 {

void withPrivateContext(CUdevice dev, const std::function<void()>& work) {
  CUcontext ctx = nullptr;
  CU_CHECK(wb::createContext(&ctx, 0, dev));
  work();
  CU_CHECK(cuCtxDestroy(ctx));
}

}  // namespace ex03
