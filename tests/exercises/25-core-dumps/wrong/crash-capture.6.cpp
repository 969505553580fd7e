// Wrong (R2): names the file on the first call only, as the process's one dump file
//
// "Where the process dumps is set once, at start-up; later calls only change what a dump holds." But
// the task names the file on every call: a service that moves its dumps (a new run folder, a disk
// filling up) keeps writing to the first path. In "R1 R2 R3 R4 R5: captureGpuCrashes turns dumps
// on globally ...", the second call's path reads back as the first: `coredumpFile(true) == paths[i]`
// fails.
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
  static bool named = false;  // the process's dump file, named once
  if (!named) {
    std::vector<char> file(path.begin(), path.end());
    file.push_back('\0');
    size_t size = file.size();
    CU_CHECK(cuCoredumpSetAttributeGlobal(CU_COREDUMP_FILE, file.data(), &size));
    named = true;
  }
  setGlobalNumber(CU_COREDUMP_ENABLE_ON_EXCEPTION, 1);
#else
  (void)path;
  (void)keepRunning;
  throw std::runtime_error("CU_COREDUMP_GENERATION_FLAGS needs CUDA 12.5");
#endif
}

}  // namespace ex25
