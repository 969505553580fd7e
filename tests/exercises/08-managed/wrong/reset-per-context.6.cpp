// Wrong (R2): clears managedCounter too, "every counter back to 0 between runs"
//
// managedCounter is the process-wide total the task says must keep its value; only the per-context
// statistic starts again. `*managed == totalBefore` fails.
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
    CU_CHECK(cuMemsetD8(address, 0, bytes));
    CU_CHECK(cuLibraryGetManaged(&address, &bytes, counters, "managedCounter"));
    CU_CHECK(cuMemsetD8(address, 0, bytes));
  }
}

}  // namespace ex08
