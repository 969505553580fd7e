// Wrong (R3): turns the CUkernel of cudaGetKernel into a CUfunction with cuKernelGetFunction before launching it
//
// "cuLaunchKernel takes a CUfunction." cuKernelGetFunction gives the kernel's function in the
// current context, which works while the caller has the stream's context current; called where the
// primary context is current with a stream of the context the application created, the launch is
// refused, and the check's last context case fails with the error CU_CHECK throws.
#include "exercises.hpp"

#include <stdexcept>
#include <string>

namespace ex11 {

void addOneThroughDriver(float* data, unsigned n, cudaStream_t stream) {
  if (n == 0) return;
  cudaKernel_t kernel = nullptr;
  const cudaError_t rc = cudaGetKernel(&kernel, addOneEntry());
  if (rc != cudaSuccess) throw std::runtime_error(std::string("cudaGetKernel: ") + cudaGetErrorName(rc));
  CUfunction function = nullptr;
  CU_CHECK(cuKernelGetFunction(&function, kernel));
  void* args[] = {&data, &n};
  CU_CHECK(cuLaunchKernel(function, (n + 255) / 256, 1, 1, 256, 1, 1, 0, stream, args, nullptr));
}

}  // namespace ex11
