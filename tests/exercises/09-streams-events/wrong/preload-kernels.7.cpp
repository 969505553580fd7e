// Wrong (R3): pushes the current context again "so the loading surely goes there", and never pops it
//
// "Make the context I load into current for the duration": the same context is on top before and
// after, so nothing seems to have changed, and every kernel lands where it should. But the stack
// is one entry deeper: the caller's next cuCtxPopCurrent pops this copy, not the context it pushed,
// and its own context stays current. In "R1 R3: after preloadKernels ...",
// `stackAfter == stackBefore` fails.
#include "exercises.hpp"

#include <stdexcept>
#include <vector>

namespace ex09 {

void preloadKernels(CUlibrary library) {
#if CUDA_VERSION >= 12040
  CUcontext target = nullptr;
  CU_CHECK(cuCtxGetCurrent(&target));
  CU_CHECK(cuCtxPushCurrent(target));  // the context the loading goes to, on top
  unsigned count = 0;
  CU_CHECK(cuLibraryGetKernelCount(&count, library));
  std::vector<CUkernel> kernels(count);
  CU_CHECK(cuLibraryEnumerateKernels(kernels.data(), count, library));
  for (CUkernel kernel : kernels) {
    CUfunction here = nullptr;
    CU_CHECK(cuKernelGetFunction(&here, kernel));
    CU_CHECK(cuFuncLoad(here));
  }
#else
  (void)library;
  throw std::runtime_error("preloadKernels needs CUDA 12.4 (cuLibraryEnumerateKernels, cuFuncLoad)");
#endif
}

}  // namespace ex09
