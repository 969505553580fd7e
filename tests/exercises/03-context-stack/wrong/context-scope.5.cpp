// Wrong (R4): wraps the push and the work in one try whose catch (...) pops and rethrows
//
// A common shape for "clean up on any error", but a push that failed pushed nothing: the catch then
// pops the caller's own context. The check refuses the push: `after == "[caller's]"` fails (the
// stack is empty).
#include "exercises.hpp"

namespace ex03 {

void withContext(CUcontext ctx, const std::function<void()>& work) {
  CUcontext popped = nullptr;
  try {
    CU_CHECK(cuCtxPushCurrent(ctx));
    work();
  } catch (...) {
    cuCtxPopCurrent(&popped);
    throw;
  }
  CU_CHECK(cuCtxPopCurrent(&popped));
}

}  // namespace ex03
