// Deliberately wrong variants of lesson 02's exercises: each check must fail on them.
#include "exercises.hpp"

#include <cstdio>

namespace ex02 {

// Wrong: reuses CU_CHECK for the throw. The code and name are right, but the error it throws names
// the expression "rc", this file and this line: the check's `expression == "cuDeviceGet(&dev,
// count)"`, `file == __FILE__` and `line == callLine` fail.
CUresult checkAllowing(CUresult rc, CUresult allowed, const char* call, const char* file, int line) {
  (void)call, (void)file, (void)line;
  if (rc != CUDA_SUCCESS && rc != allowed) CU_CHECK(rc);
  return rc;
}

// Wrong: one handler for every std::exception, "they all have what()". The message is right, but a
// wb::DriverError comes back as CUDA_ERROR_UNKNOWN and std::bad_alloc too: the check's
// `rc == CUDA_ERROR_INVALID_DEVICE` and `outOfMemory == CUDA_ERROR_OUT_OF_MEMORY` fail.
CUresult callGuarded(const std::function<void()>& body, char* message, size_t capacity) {
  try {
    body();
    if (capacity > 0) message[0] = '\0';
    return CUDA_SUCCESS;
  } catch (const std::exception& e) {
    if (capacity > 0) std::snprintf(message, capacity, "%s", e.what());
  } catch (...) {
    if (capacity > 0) std::snprintf(message, capacity, "unknown exception");
  }
  return CUDA_ERROR_UNKNOWN;
}

}  // namespace ex02
