// Wrong (R3): lets CUDA_ERROR_NOT_READY through whatever code is allowed, "pending is never a failure"
//
// The macro was written for poll loops, so NOT_READY is waved through always. But a call that
// allows another code (or a call that is not a query at all) then gets NOT_READY back where it
// counted on success or its one allowed code, and goes on as if it had succeeded. The case of
// NOT_READY with INVALID_DEVICE allowed fails `threw`.
#include "exercises.hpp"

namespace ex02 {

// The macro captured the call's text, file and line where it was written; this function only
// decides. Throwing through CU_CHECK(rc) here would report "rc" at this line: every failure in the
// program would point at the helper instead of the call. The allowed code comes back as it is, so
// the caller's loop can tell it from success.
CUresult checkAllowing(CUresult rc, CUresult allowed, const char* call, const char* file, int line) {
  if (rc == CUDA_SUCCESS || rc == allowed || rc == CUDA_ERROR_NOT_READY) return rc;
  wb::throwDriverError(rc, call, file, line);
}

}  // namespace ex02
