// Wrong (R1 R5): sets the attributes for the current context (cuCoredumpSetAttribute), not globally
//
// cuCoredumpSetAttribute has the shorter name and applies at once; but only to the current context,
// while the task asks for every context created from now on. The global settings read back
// unchanged: the checks of the global file and flags fail, and cuCoredumpSetAttribute was called.
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
  CU_CHECK(cuCoredumpSetAttribute(which, bytes, &size));
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
  CU_CHECK(cuCoredumpSetAttribute(CU_COREDUMP_FILE, file.data(), &size));
  setGlobalNumber(CU_COREDUMP_ENABLE_ON_EXCEPTION, 1);
#else
  (void)path;
  (void)keepRunning;
  throw std::runtime_error("CU_COREDUMP_GENERATION_FLAGS needs CUDA 12.5");
#endif
}

}  // namespace ex25
