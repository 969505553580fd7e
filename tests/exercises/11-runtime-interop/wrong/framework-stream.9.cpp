// Wrong (R7): reports a failed launch as std::runtime_error with a message of its own
//
// "A library should throw its own readable errors, not the driver's": the message names the kernel
// and the error, but the framework catches wb::DriverError to read the code (to tell an
// out-of-memory from a fault, lesson 10) and this passes it by. In "R1 R2 R5 R6 R7: a failed launch
// ...", `failed.threw` fails.
#include "exercises.hpp"

#include <stdexcept>

namespace ex11 {

void scaleInStream(CUkernel scale, float* data, unsigned n, float factor, float offset, cudaStream_t stream) {
  if (n == 0) return;  // an empty tensor: a grid of no blocks is not a launch, the driver refuses it
  CUdeviceptr p = reinterpret_cast<CUdeviceptr>(data);  // one address space: the runtime's pointer is the driver's
  void* args[] = {&p, &factor, &offset, &n};             // in the order of scale's parameters
  const CUresult rc = cuLaunchKernel(reinterpret_cast<CUfunction>(scale), (n + 255) / 256, 1, 1, 256, 1, 1, 0, stream,
                                     args, nullptr);
  if (rc != CUDA_SUCCESS) throw std::runtime_error("scaleInStream: scale could not be launched: " + wb::errorName(rc));
}

}  // namespace ex11
