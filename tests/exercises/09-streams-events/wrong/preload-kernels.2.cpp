// Wrong (R2): loads the kernels into device 0's primary context, pushed for the purpose, not the current one
//
// "Kernels are loaded into a context, so make sure there is one": the runtime's habit of the
// primary context. It pops what it pushed, so the stack is kept; but a caller whose current context
// is one of its own (or another device's) gets nothing loaded there. In the second case,
// `inOwn.notLoaded == 0` fails, and the stamp beside the gate in that context waits for the gate.
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
  CUdevice device = 0;
  CU_CHECK(cuDeviceGet(&device, 0));
  CUcontext primary = nullptr;
  CU_CHECK(cuDevicePrimaryCtxRetain(&primary, device));
  CU_CHECK(cuCtxPushCurrent(primary));
  for (CUkernel kernel : kernels) {
    CUfunction here = nullptr;
    CU_CHECK(cuKernelGetFunction(&here, kernel));
    CU_CHECK(cuFuncLoad(here));
  }
  CUcontext popped = nullptr;
  CU_CHECK(cuCtxPopCurrent(&popped));
  CU_CHECK(cuDevicePrimaryCtxRelease(device));
#else
  (void)library;
  throw std::runtime_error("preloadKernels needs CUDA 12.4 (cuLibraryEnumerateKernels, cuFuncLoad)");
#endif
}

}  // namespace ex09
