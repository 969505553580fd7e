// Wrong (R1): lets only the allowed code through and throws for CUDA_SUCCESS
//
// "Allowed" read as "the one code to pass": a poll loop that finally sees its stream done throws
// instead of ending. The check's EX02_CHECK_ALLOWING(cuDeviceGetCount(&seen), ...), and the
// cuStreamQuery after the gate opened, throw: each case fails with that wb::DriverError.
#include "exercises.hpp"

namespace ex02 {

CUresult checkAllowing(CUresult rc, CUresult allowed, const char* call, const char* file, int line) {
  if (rc == allowed) return rc;
  wb::throwDriverError(rc, call, file, line);
}

}  // namespace ex02
