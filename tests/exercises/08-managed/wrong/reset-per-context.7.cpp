// Wrong (R5): clears each copy with cuMemsetD8 without checking what it returns
//
// "A memset of an address the driver just gave cannot fail." It can (a context whose earlier work
// faulted refuses everything), and then a counter the caller believes is 0 still counts. In "R4 R5:
// when the second cuLibraryGetGlobal fails, or the first write ...", the failed cuMemsetD8 is not
// thrown and `threw` is false.
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
    cuMemsetD8(address, 0, bytes);
  }
}

}  // namespace ex08
