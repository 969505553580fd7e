// Wrong (R1): clears one 32-bit word of the counter: cuMemsetD32(address, 0, 1)
//
// "A counter is a word." deviceCounter is an unsigned long long: its upper half keeps its bits, which
// a counter reaches after 2^32 counts. The check stores values with bits in both halves, and
// `left == 0` fails.
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
  for (CUcontext ctx : contexts) {
    Pushed current(ctx);
    CUdeviceptr address = 0;
    size_t bytes = 0;
    CU_CHECK(cuLibraryGetGlobal(&address, &bytes, counters, "deviceCounter"));
    CU_CHECK(cuMemsetD32(address, 0, 1));
  }
}

}  // namespace ex08
