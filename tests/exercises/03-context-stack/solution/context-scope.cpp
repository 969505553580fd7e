// Reference solution of lesson 03's exercise context-scope (lessons/03-context-stack/exercises.cpp).
#include "exercises.hpp"

namespace ex03 {

namespace {

// Pops at scope exit, by return or by exception. A destructor that throws while an exception
// unwinds ends the program, so the pop's result is only looked at, never thrown.
struct PopAtExit {
  ~PopAtExit() {
    CUcontext popped = nullptr;
    cuCtxPopCurrent(&popped);
  }
};

}  // namespace

// Push, then a guard: from here on, every way out of the scope pops exactly what was pushed. A push
// that fails pushed nothing, so it throws before the guard exists and nothing of the caller's is
// popped. The stack below ctx is never touched, so it comes back as the caller had it.
void withContext(CUcontext ctx, const std::function<void()>& work) {
  CU_CHECK(cuCtxPushCurrent(ctx));
  PopAtExit pop;
  work();
}

}  // namespace ex03
