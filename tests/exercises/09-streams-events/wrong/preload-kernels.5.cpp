// Wrong (R1): gets the function of one kernel only, "which loads the library's module into the context"
//
// The module does come into the context with the first kernel, but under lazy loading each
// function is loaded on its own: the others stay unloaded, and the first launch of each waits for
// whatever runs. In the first case, `here.notLoaded == 0` fails (and the stamp beside the gate may
// wait for it).
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
  if (!kernels.empty()) {
    CUfunction here = nullptr;
    CU_CHECK(cuKernelGetFunction(&here, kernels.front()));
    CU_CHECK(cuFuncLoad(here));
  }
#else
  (void)library;
  throw std::runtime_error("preloadKernels needs CUDA 12.4 (cuLibraryEnumerateKernels, cuFuncLoad)");
#endif
}

}  // namespace ex09
