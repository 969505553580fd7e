// Wrong (R4): skips a kernel whose function cannot be had in this context, "best effort"
//
// "Preloading is an optimisation: what cannot be preloaded is loaded at its launch, as without
// it." But that launch is the one the task is there to spare: beside a running gate it waits, or
// hangs, and the caller was told every kernel was ready. In "R4: a cuFuncLoad or
// cuKernelGetFunction that fails ...", the second cuKernelGetFunction fails, preloadKernels
// returns, and `outcome != "returned"` fails.
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
    if (cuKernelGetFunction(&here, kernel) != CUDA_SUCCESS) continue;  // left for its launch
    CU_CHECK(cuFuncLoad(here));
  }
#else
  (void)library;
  throw std::runtime_error("preloadKernels needs CUDA 12.4 (cuLibraryEnumerateKernels, cuFuncLoad)");
#endif
}

}  // namespace ex09
