// Wrong (R3): throws a std::runtime_error carrying the message instead of wb::DriverError
//
// The text reads the same, but the caller can no longer ask for the code: the check's `catch (const
// wb::DriverError& e)` does not take it, and the case fails with the runtime_error.
#include "exercises.hpp"

#include <stdexcept>

namespace ex02 {

CUresult checkAllowing(CUresult rc, CUresult allowed, const char* call, const char* file, int line) {
  if (rc == CUDA_SUCCESS || rc == allowed) return rc;
  throw std::runtime_error(wb::DriverError(rc, call, file, line).what());
}

}  // namespace ex02
