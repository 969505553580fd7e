// Wrong (R2): counts CUDA_ERROR_NOT_READY among the fatal codes: "the device is not ready" read as a GPU that stopped answering
//
// The name sounds like a device in trouble, but cuda.h says it "is not actually an error": a query
// (cuStreamQuery, cuEventQuery) answers it while work is still running. A server that polls its
// streams would restart every time the GPU is busy. In "R1 R2: true for every code ...",
// `!onNotReady` fails.
#include "exercises.hpp"

namespace ex10 {

bool mustRestart(CUresult error) {
  switch (error) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_MPS_CLIENT_TERMINATED:
    case CUDA_ERROR_EXTERNAL_DEVICE:
    case CUDA_ERROR_NOT_READY:  // the device no longer answers
#if CUDA_VERSION >= 13000  // not in 12.6's header
    case CUDA_ERROR_CONTAINED:
    case CUDA_ERROR_TENSOR_MEMORY_LEAK:
#endif
      return true;
    default:
      return false;
  }
}

}  // namespace ex10
