// Reference solution of lesson 08's exercise reset-per-context (lessons/08-managed/exercises.cpp).
#include "exercises.hpp"

namespace ex08 {

namespace {

// Pushes a context for a scope and pops it at the end, also when a call in between throws, so the
// caller's context stack is as it was.
class Pushed {
 public:
  explicit Pushed(CUcontext ctx) { CU_CHECK(cuCtxPushCurrent(ctx)); }
  ~Pushed() {
    CUcontext popped = nullptr;
    cuCtxPopCurrent(&popped);
  }
  Pushed(const Pushed&) = delete;
  Pushed& operator=(const Pushed&) = delete;
};

}  // namespace

// A __device__ variable has one copy per context that uses the library, so the reset goes context by
// context: cuLibraryGetGlobal answers for the current context only, with that context's address.
// Two contexts on one device are two copies; a loop over devices would miss all but one of them.
// The size comes from the driver too: every byte of the variable is cleared, whatever its type.
void resetPerContext(CUlibrary counters, const std::vector<CUcontext>& contexts) {
  for (CUcontext ctx : contexts) {
    Pushed current(ctx);
    CUdeviceptr address = 0;
    size_t bytes = 0;
    CU_CHECK(cuLibraryGetGlobal(&address, &bytes, counters, "deviceCounter"));
    CU_CHECK(cuMemsetD8(address, 0, bytes));
  }
}

}  // namespace ex08
