// Wrong (R3): push, work, pop, written in that order
//
// When work throws, the pop is skipped and ctx stays on the caller's stack above its own context:
// the check's `afterThrow == "[caller's]"` fails.
#include "exercises.hpp"

namespace ex03 {

void withContext(CUcontext ctx, const std::function<void()>& work) {
  CU_CHECK(cuCtxPushCurrent(ctx));
  work();
  CUcontext popped = nullptr;
  CU_CHECK(cuCtxPopCurrent(&popped));
}

}  // namespace ex03
