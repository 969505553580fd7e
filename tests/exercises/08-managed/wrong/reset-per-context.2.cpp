// Wrong (R3): looks the variable's address up once, in the first context, and clears that address in every context
//
// "A variable has one address." Each context's copy has its own: the first context's copy is cleared
// again and again, the others keep their counts, and `left == 0` fails for them (or
// the memset is refused in a context where that address is not its own).
#include "exercises.hpp"

namespace ex08 {

namespace {

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

void resetPerContext(CUlibrary counters, const std::vector<CUcontext>& contexts) {
  CUdeviceptr address = 0;
  size_t bytes = 0;
  {
    Pushed current(contexts.at(0));
    CU_CHECK(cuLibraryGetGlobal(&address, &bytes, counters, "deviceCounter"));
  }
  for (CUcontext ctx : contexts) {
    Pushed current(ctx);
    CU_CHECK(cuMemsetD8(address, 0, bytes));
  }
}

}  // namespace ex08
