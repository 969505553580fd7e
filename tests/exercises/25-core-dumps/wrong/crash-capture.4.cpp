// Wrong (R1): sets the file and the flags but never turns dumps on
//
// The generation flags and the file name read like the whole set-up, and CU_COREDUMP_LIGHTWEIGHT_FLAGS
// sounds like "dumps, lightweight"; but CU_COREDUMP_ENABLE_ON_EXCEPTION is false by default (cuda.h),
// so no fault writes a dump. The check of ENABLE_ON_EXCEPTION fails.
#include "exercises.hpp"

#include <cstring>
#include <vector>

namespace ex25 {

namespace {
// A number attribute in as many bytes as the driver expects for it (asked with value NULL).
void setGlobalNumber(CUcoredumpSettings which, long long value) {
  size_t size = 0;
  CU_CHECK(cuCoredumpGetAttributeGlobal(which, nullptr, &size));
  if (size == 0 || size > sizeof value) CU_CHECK(CUDA_ERROR_INVALID_VALUE);
  unsigned char bytes[sizeof value] = {};
  std::memcpy(bytes, &value, size);  // the low bytes, on a little-endian machine
  CU_CHECK(cuCoredumpSetAttributeGlobal(which, bytes, &size));
}
}  // namespace

// Global: every context created from now on takes these settings when it is created. The flags are
// set whole, so a SKIP_ABORT an earlier call set does not survive a call without keepRunning.
void captureGpuCrashes(const std::string& path, bool keepRunning) {
#if CUDA_VERSION >= 12050
  long long flags = CU_COREDUMP_LIGHTWEIGHT_FLAGS;
  if (keepRunning) flags |= CU_COREDUMP_SKIP_ABORT;
  setGlobalNumber(CU_COREDUMP_GENERATION_FLAGS, flags);
  std::vector<char> file(path.begin(), path.end());
  file.push_back('\0');
  size_t size = file.size();
  CU_CHECK(cuCoredumpSetAttributeGlobal(CU_COREDUMP_FILE, file.data(), &size));
#else
  (void)path;
  (void)keepRunning;
  throw std::runtime_error("CU_COREDUMP_GENERATION_FLAGS needs CUDA 12.5");
#endif
}

}  // namespace ex25
