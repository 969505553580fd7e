// Reference solution of lesson 10's exercise must-restart (lessons/10-kernel-faults/exercises.cpp).
#include "exercises.hpp"

namespace ex10 {

// The codes whose description in cuda.h ends "To continue using CUDA, the process must be
// terminated and relaunched", and CUDA_ERROR_ASSERT ("The context cannot be used anymore, and must
// be destroyed": the reference scopes it to the context, and a server whose work lives in the
// primary context has no other to go on in). Everything else was about the call that returned it
// (CUDA_ERROR_NOT_READY is not even an error). A production server might add codes the reference
// leaves open, such as CUDA_ERROR_ECC_UNCORRECTABLE or CUDA_ERROR_UNKNOWN.
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
