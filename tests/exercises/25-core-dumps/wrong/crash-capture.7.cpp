// Wrong (R4): passes each number in a width of its own choosing, without asking the driver's
//
// "A bool is an int, flags are 64 bits": the sizes look known from the types cuda.h names, so the
// call that asks for them seems one too many. But the reference gives the size as the driver's to
// say (asked with value NULL), and a width it does not expect is refused or read wrong on another
// driver. In "R1 R2 R3 R4 R5: captureGpuCrashes turns dumps on globally ...", no size is asked:
// `enableSized` and `flagsSized` fail (or the driver refuses the width, and the call throws).
#include "exercises.hpp"

#include <cstring>
#include <vector>

namespace ex25 {

namespace {
// A number attribute in as many bytes as the driver expects for it (asked with value NULL).
void setGlobalNumber(CUcoredumpSettings which, long long value) {
  if (which == CU_COREDUMP_ENABLE_ON_EXCEPTION) {
    int on = value != 0;
    size_t size = sizeof on;
    CU_CHECK(cuCoredumpSetAttributeGlobal(which, &on, &size));
    return;
  }
  size_t size = sizeof value;
  CU_CHECK(cuCoredumpSetAttributeGlobal(which, &value, &size));
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
#else
  (void)path;
  (void)keepRunning;
  throw std::runtime_error("CU_COREDUMP_GENERATION_FLAGS needs CUDA 12.5");
#endif
}

}  // namespace ex25
