// Wrong (R4): launches the CUfunction of cuKernelGetFunction in device 0's primary context, retained and pushed for the call
//
// "cuLaunchKernel takes a CUfunction, and a CUfunction needs a context": the library picks the
// primary context, the runtime's. It pushes, pops and releases it properly, and all is well while
// the framework's stream is in the primary context; for a stream the framework made in a context of
// its own the function belongs to another context and the launch is refused, so the check's last
// thread case fails with the error CU_CHECK throws.
#include "exercises.hpp"

namespace ex11 {

namespace {

// The primary context of device 0, retained and pushed for the scope.
class PrimaryScope {
 public:
  PrimaryScope() {
    CU_CHECK(cuDeviceGet(&dev_, 0));
    CU_CHECK(cuDevicePrimaryCtxRetain(&ctx_, dev_));
    const CUresult pushed = cuCtxPushCurrent(ctx_);
    if (pushed != CUDA_SUCCESS) cuDevicePrimaryCtxRelease(dev_);
    CU_CHECK(pushed);
  }
  ~PrimaryScope() {
    CUcontext popped = nullptr;
    cuCtxPopCurrent(&popped);
    cuDevicePrimaryCtxRelease(dev_);
  }
  PrimaryScope(const PrimaryScope&) = delete;
  PrimaryScope& operator=(const PrimaryScope&) = delete;

 private:
  CUdevice dev_ = 0;
  CUcontext ctx_ = nullptr;
};

}  // namespace

void scaleInStream(CUkernel scale, float* data, unsigned n, float factor, float offset, cudaStream_t stream) {
  if (n == 0) return;
  PrimaryScope in;
  CUfunction f = nullptr;
  CU_CHECK(cuKernelGetFunction(&f, scale));
  CUdeviceptr p = reinterpret_cast<CUdeviceptr>(data);
  void* args[] = {&p, &factor, &offset, &n};
  CU_CHECK(cuLaunchKernel(f, (n + 255) / 256, 1, 1, 256, 1, 1, 0, stream, args, nullptr));
}

}  // namespace ex11
