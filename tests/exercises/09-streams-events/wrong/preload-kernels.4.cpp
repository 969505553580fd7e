// Wrong (R4): ignores what cuFuncLoad returns
//
// "cuFuncLoad only finishes what cuKernelGetFunction started; it cannot fail." It can (out of
// memory for the code, a context that faulted), and then the first launch of the kernel loads it
// after all, beside a running gate. In "R4: a cuFuncLoad or cuKernelGetFunction that fails ...",
// `outcome != "returned"` fails.
#include "exercises.hpp"

#include <stdexcept>
#include <vector>

namespace ex09 {

void preloadKernels(CUlibrary library) {
#if CUDA_VERSION >= 12040
  unsigned count = 0;
  CU_CHECK(cuLibraryGetKernelCount(&count, library));
  std::vector<CUkernel> kernels(count);
  CU_CHECK(cuLibraryEnumerateKernels(kernels.data(), count, library));
  for (CUkernel kernel : kernels) {
    CUfunction here = nullptr;
    CU_CHECK(cuKernelGetFunction(&here, kernel));
    cuFuncLoad(here);
  }
#else
  (void)library;
  throw std::runtime_error("preloadKernels needs CUDA 12.4 (cuLibraryEnumerateKernels, cuFuncLoad)");
#endif
}

}  // namespace ex09
