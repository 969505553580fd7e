// Wrong (R1): "looking every kernel up loads it": cuLibraryGetKernel for each kernel the library lists
//
// A CUkernel is the process-wide handle; nothing is loaded into the context until a launch needs it.
// The stamp's launch then has to load it while the gate runs, waits until the gate gives up, and
// `seen.whenStamped == wb::Gate::Waiting` fails; burn, never launched, is not loaded either
// (`here.notLoaded == 0` fails).
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
  for (CUkernel listed : kernels) {
    const char* name = nullptr;
    CU_CHECK(cuKernelGetName(&name, listed));
    CUkernel kernel = nullptr;
    CU_CHECK(cuLibraryGetKernel(&kernel, library, name));
  }
#else
  (void)library;
  throw std::runtime_error("preloadKernels needs CUDA 12.4 (cuLibraryEnumerateKernels, cuFuncLoad)");
#endif
}

}  // namespace ex09
