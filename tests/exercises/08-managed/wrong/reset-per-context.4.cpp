// Wrong (R4): pushes and pops each context with CU_CHECK around the lookup, so a failed call leaves it pushed
//
// Right as long as nothing fails. When the second cuLibraryGetGlobal fails, CU_CHECK throws between
// the push and the pop, and the caller's thread keeps that context on top of its stack:
// `stackAfter == stack` fails.
#include "exercises.hpp"

namespace ex08 {

void resetPerContext(CUlibrary counters, const std::vector<CUcontext>& contexts) {
  for (CUcontext ctx : contexts) {
    CU_CHECK(cuCtxPushCurrent(ctx));
    CUdeviceptr address = 0;
    size_t bytes = 0;
    CU_CHECK(cuLibraryGetGlobal(&address, &bytes, counters, "deviceCounter"));
    CU_CHECK(cuMemsetD8(address, 0, bytes));
    CUcontext popped = nullptr;
    CU_CHECK(cuCtxPopCurrent(&popped));
  }
}

}  // namespace ex08
