// Deliberately wrong variants of lesson 11's exercises: each check must fail on them.
#include "exercises.hpp"

#include <stdexcept>
#include <string>

namespace ex11 {

// Wrong: does what many launchers do to "have a context": when none is current, it retains device
// 0's primary context and makes it current with cuCtxSetCurrent, and leaves it there. The kernel
// runs in the right stream with the right values, but a worker thread that had no context now has
// the primary context current, which nobody there set and nobody will release. The check's
// `after == nullptr` in the new thread fails.
void scaleInStream(CUkernel scale, float* data, unsigned n, float factor, float offset, cudaStream_t stream) {
  CUcontext current = nullptr;
  CU_CHECK(cuCtxGetCurrent(&current));
  if (!current) {
    CUdevice dev = 0;
    CU_CHECK(cuDeviceGet(&dev, 0));
    CU_CHECK(cuDevicePrimaryCtxRetain(&current, dev));
    CU_CHECK(cuCtxSetCurrent(current));
  }
  CUdeviceptr p = reinterpret_cast<CUdeviceptr>(data);
  void* args[] = {&p, &factor, &offset, &n};
  CU_CHECK(cuLaunchKernel(reinterpret_cast<CUfunction>(scale), (n + 255) / 256, 1, 1, 256, 1, 1, 0, stream, args,
                          nullptr));
}

// Wrong: looks the kernel up once with cudaGetFuncBySymbol and keeps the handle, as one keeps a
// CUfunction from cuModuleGetFunction. A cudaFunction_t is the CUfunction of the context that was
// current at the lookup (the primary context here): launched later into a stream of the context the
// application created, it is refused (lesson 06 showed CUDA_ERROR_INVALID_HANDLE for a function of
// another context), and the check's second case fails with that error.
void addOneThroughDriver(float* data, unsigned n, cudaStream_t stream) {
  static CUfunction function = nullptr;
  if (!function) {
    cudaFunction_t found = nullptr;
    const cudaError_t rc = cudaGetFuncBySymbol(&found, addOneEntry());
    if (rc != cudaSuccess) throw std::runtime_error(std::string("cudaGetFuncBySymbol: ") + cudaGetErrorName(rc));
    function = found;  // a cudaFunction_t is a CUfunction
  }
  void* args[] = {&data, &n};
  CU_CHECK(cuLaunchKernel(function, (n + 255) / 256, 1, 1, 256, 1, 1, 0, stream, args, nullptr));
}

}  // namespace ex11
