// Wrong (R1): only the codes whose text says "the process must be terminated and relaunched", without CUDA_ERROR_ASSERT
//
// A search of cuda.h for that one sentence finds every process-wide fault and misses the device-side
// assert, whose text says it in other words ("The context cannot be used anymore, and must be
// destroyed"). The check's `restart` fails for CUDA_ERROR_ASSERT in the documented list, and for the
// child whose device-side assert failed.
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
