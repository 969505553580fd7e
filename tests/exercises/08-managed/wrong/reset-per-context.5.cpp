// Wrong (R4): makes each context current with cuCtxSetCurrent, and leaves the last one current
//
// "Set the context, clear, next." cuCtxSetCurrent replaces the top of the caller's stack instead of
// pushing onto it, and nothing puts the caller's context back: `stackAfter == stack` fails.
#include "exercises.hpp"

namespace ex08 {

void resetPerContext(CUlibrary counters, const std::vector<CUcontext>& contexts) {
  for (CUcontext ctx : contexts) {
    CU_CHECK(cuCtxSetCurrent(ctx));
    CUdeviceptr address = 0;
    size_t bytes = 0;
    CU_CHECK(cuLibraryGetGlobal(&address, &bytes, counters, "deviceCounter"));
    CU_CHECK(cuMemsetD8(address, 0, bytes));
  }
}

}  // namespace ex08
