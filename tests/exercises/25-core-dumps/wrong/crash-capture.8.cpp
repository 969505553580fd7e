// Wrong (R5): sets the current context's settings too, so that it dumps as well
//
// The global settings reach only contexts created from now on, and the context already running looks
// left out: the same three settings are made per context too. But the current context is the
// caller's, which decided its own dumps (a context that must never dump, or dumps elsewhere). In
// "R1 R2 R3 R4 R5: captureGpuCrashes turns dumps on globally ...",
// `wbx::calls("cuCoredumpSetAttribute") == perContextBefore` and the checks of the current context's
// own settings fail.
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
  setGlobalNumber(CU_COREDUMP_ENABLE_ON_EXCEPTION, 1);
  // And the context already running (cuCoredumpSetAttribute acts on the current one).
  CU_CHECK(cuCoredumpSetAttribute(CU_COREDUMP_FILE, file.data(), &size));
  int on = 1;
  size_t onSize = 0;
  CU_CHECK(cuCoredumpGetAttribute(CU_COREDUMP_ENABLE_ON_EXCEPTION, nullptr, &onSize));
  if (onSize == 0 || onSize > sizeof on) CU_CHECK(CUDA_ERROR_INVALID_VALUE);
  CU_CHECK(cuCoredumpSetAttribute(CU_COREDUMP_ENABLE_ON_EXCEPTION, &on, &onSize));
#else
  (void)path;
  (void)keepRunning;
  throw std::runtime_error("CU_COREDUMP_GENERATION_FLAGS needs CUDA 12.5");
#endif
}

}  // namespace ex25
