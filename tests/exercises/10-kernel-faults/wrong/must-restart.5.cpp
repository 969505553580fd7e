// Wrong (R3): counts CUDA_ERROR_OUT_OF_MEMORY among the fatal codes: "the device is full, a fresh process frees it"
//
// An allocation the device cannot hold is refused without harm: the memory of this process is
// still there and still works. Restarting on it turns one oversized request into an outage. The
// check's `!restart` fails for the allocation of twice the device's memory.
#include "exercises.hpp"

namespace ex10 {

bool mustRestart(CUresult error) {
  switch (error) {
    case CUDA_ERROR_OUT_OF_MEMORY:
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
#if CUDA_VERSION >= 13000
    case CUDA_ERROR_CONTAINED:
    case CUDA_ERROR_TENSOR_MEMORY_LEAK:
#endif
      return true;
    default:
      return false;
  }
}

}  // namespace ex10
