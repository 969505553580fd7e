// Wrong (R3): pops on the way out of a catch (const std::exception&), "every exception is a std::exception"
//
// An exception of another type (a library's own, an int) leaves without the pop, and ctx stays on
// the caller's stack. The check's work throws a type of its own: `afterThrow == "[caller's]"` fails.
#include "exercises.hpp"

#include <exception>

namespace ex03 {

void withContext(CUcontext ctx, const std::function<void()>& work) {
  CU_CHECK(cuCtxPushCurrent(ctx));
  CUcontext popped = nullptr;
  try {
    work();
  } catch (const std::exception&) {
    cuCtxPopCurrent(&popped);
    throw;
  }
  CU_CHECK(cuCtxPopCurrent(&popped));
}

}  // namespace ex03
