// Wrong (R2): returns CUDA_SUCCESS for the allowed code, "it is not an error here"
//
// The caller's loop `while (EX02_CHECK_ALLOWING(cuStreamQuery(s), CUDA_ERROR_NOT_READY) ==
// CUDA_ERROR_NOT_READY)` then ends at once, with the work still pending: `allowed ==
// CUDA_ERROR_INVALID_DEVICE` and, with the gate closed, `whileHeld == CUDA_ERROR_NOT_READY` fail.
#include "exercises.hpp"

namespace ex02 {

CUresult checkAllowing(CUresult rc, CUresult allowed, const char* call, const char* file, int line) {
  if (rc == CUDA_SUCCESS || rc == allowed) return CUDA_SUCCESS;
  wb::throwDriverError(rc, call, file, line);
}

}  // namespace ex02
