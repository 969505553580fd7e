// Reference solution of lesson 09's exercise preload-kernels (lessons/09-streams-events/exercises.cpp).
#include "exercises.hpp"

#include <stdexcept>
#include <vector>

namespace ex09 {

// cuKernelGetFunction makes the kernel's module part of the current context and returns the
// context's own CUfunction; cuFuncLoad finishes loading it if lazy loading left it partly loaded.
// Neither runs anything, so neither needs the kernels' parameters, and from here on a launch of any
// of them in this context has nothing to load, and nothing to wait for. Nothing is remembered
// between calls: a CUfunction belongs to one context, and the next call may come from another.
void preloadKernels(CUlibrary library) {
#if CUDA_VERSION >= 12040
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
