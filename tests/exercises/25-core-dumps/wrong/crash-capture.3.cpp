// Wrong (R3): adds its flags to the ones already set instead of setting them whole
//
// OR-ing flags into what is there keeps other settings, which sounds polite; but a SKIP_ABORT an
// earlier call set is never taken back. The third call (keepRunning false, after one with true)
// reads back with SKIP_ABORT: the flags check fails.
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
  {
    size_t size = 0;
    CU_CHECK(cuCoredumpGetAttributeGlobal(CU_COREDUMP_GENERATION_FLAGS, nullptr, &size));
    long long current = 0;
    CU_CHECK(cuCoredumpGetAttributeGlobal(CU_COREDUMP_GENERATION_FLAGS, &current, &size));
    flags |= current;  // keep what is set
  }
  if (keepRunning) flags |= CU_COREDUMP_SKIP_ABORT;
  setGlobalNumber(CU_COREDUMP_GENERATION_FLAGS, flags);
  std::vector<char> file(path.begin(), path.end());
  file.push_back('\0');
  size_t size = file.size();
  CU_CHECK(cuCoredumpSetAttributeGlobal(CU_COREDUMP_FILE, file.data(), &size));
  setGlobalNumber(CU_COREDUMP_ENABLE_ON_EXCEPTION, 1);
#else
  (void)path;
  (void)keepRunning;
  throw std::runtime_error("CU_COREDUMP_GENERATION_FLAGS needs CUDA 12.5");
#endif
}

}  // namespace ex25
