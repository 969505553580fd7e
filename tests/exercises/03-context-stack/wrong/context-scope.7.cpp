// Wrong (R1): makes the guard a temporary, `Current{ctx};`, which pops again at the end of its statement
//
// The guard pushes in its constructor and pops in its destructor, as a scope guard should; but an
// object with no name lives only to the end of its full expression. ctx is pushed and popped before
// work starts, and work runs in whatever the caller had current. The stack comes back right, so
// only the work notices: the check's `onEmpty == mine` fails.
#include "exercises.hpp"

namespace ex03 {

namespace {

// Pushes when made, pops at scope exit, by return or by exception.
struct Current {
  explicit Current(CUcontext ctx) { CU_CHECK(cuCtxPushCurrent(ctx)); }
  ~Current() {
    CUcontext popped = nullptr;
    cuCtxPopCurrent(&popped);
  }
  Current(const Current&) = delete;
  Current& operator=(const Current&) = delete;
};

}  // namespace

// Push, then a guard: from here on, every way out of the scope pops exactly what was pushed. A push
// that fails pushed nothing, so it throws before the guard exists and nothing of the caller's is
// popped. The stack below ctx is never touched, so it comes back as the caller had it.
void withContext(CUcontext ctx, const std::function<void()>& work) {
  Current{ctx};
  work();
}

}  // namespace ex03
