// Wrong (R3): pops in a catch (const std::exception& e) and rethrows with `throw e;`
//
// "Catch, clean up, throw it on": but `throw e` throws a copy of the static type, std::exception,
// and a wb::DriverError from the work loses its type and its code on the way (catch (...) and
// `throw;` keep them). The check's work that fails a driver call is caught by `catch (const
// wb::DriverError& e)` no more: the case "R1 R3" fails with the std::exception.
#include "exercises.hpp"

namespace ex03 {

namespace {

void pop() {
  CUcontext popped = nullptr;
  cuCtxPopCurrent(&popped);
}

}  // namespace

// Push, then a guard: from here on, every way out of the scope pops exactly what was pushed. A push
// that fails pushed nothing, so it throws before the guard exists and nothing of the caller's is
// popped. The stack below ctx is never touched, so it comes back as the caller had it.
void withContext(CUcontext ctx, const std::function<void()>& work) {
  CU_CHECK(cuCtxPushCurrent(ctx));
  try {
    work();
  } catch (const std::exception& e) {
    pop();
    throw e;
  } catch (...) {
    pop();
    throw;
  }
  pop();
}

}  // namespace ex03
