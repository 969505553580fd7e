// Wrong (R2): preloads each library once, remembering the libraries it has done
//
// "Loading is expensive: do it once per library." But a CUfunction belongs to one context, and a
// library loaded into one context is not loaded into the next: the second context the same library
// is preloaded for gets nothing. In the second case, `inOwn.notLoaded == 0` fails.
#include "exercises.hpp"

#include <set>
#include <stdexcept>
#include <vector>

namespace ex09 {

void preloadKernels(CUlibrary library) {
#if CUDA_VERSION >= 12040
  static std::set<CUlibrary> done;
  if (!done.insert(library).second) return;
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
