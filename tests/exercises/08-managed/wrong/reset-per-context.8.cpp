// Wrong (R5): skips a context whose cuLibraryGetGlobal fails, "the library is not loaded there, so it has no copy to clear"
//
// A lookup that fails says nothing of the sort: the copy may well be there, still counting, and the
// caller is told the reset went through. In "R4 R5: when the second cuLibraryGetGlobal fails ...",
// nothing is thrown and `threw` is false.
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
    if (cuLibraryGetGlobal(&address, &bytes, counters, "deviceCounter") != CUDA_SUCCESS) continue;
    CU_CHECK(cuMemsetD8(address, 0, bytes));
  }
}

}  // namespace ex08
