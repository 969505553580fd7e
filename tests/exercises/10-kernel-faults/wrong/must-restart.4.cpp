// Wrong (R2 R3): restarts on every error except the few it knows to be harmless (a refused launch, out of memory, a missing name)
//
// An allow-list of the errors the author has met: every error not on it restarts the process. The
// check's four classic errors pass, but `!restart` fails for CUDA_ERROR_INVALID_HANDLE (the time
// between events never recorded) and CUDA_ERROR_INVALID_CONTEXT (an allocation in a thread with no
// current context), and `!onNotReady` for CUDA_ERROR_NOT_READY.
#include "exercises.hpp"

namespace ex10 {

bool mustRestart(CUresult error) {
  switch (error) {
    case CUDA_SUCCESS:
    case CUDA_ERROR_INVALID_VALUE:
    case CUDA_ERROR_OUT_OF_MEMORY:
    case CUDA_ERROR_NOT_FOUND:
    case CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED:
      return false;
    default:
      return true;
  }
}

}  // namespace ex10
