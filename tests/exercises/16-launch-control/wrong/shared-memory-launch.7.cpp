// Wrong (R7): does not look at what cuLaunchKernel returns, "a launch's errors show at the next synchronisation"
//
// Errors of the kernel's execution do; a launch the driver refuses (too many threads, too much
// shared memory, a bad argument) says so only in what cuLaunchKernel returns, and is then simply
// not run: the caller waits for sums that never come. In "R7: a raise of the attribute or a launch
// that the driver fails ...", the failed launch returns: `driverError` fails.
#include "exercises.hpp"

#include <stdexcept>
#include <string>

namespace ex16 {

// The limit is the device's opt-in shared memory per block minus what the kernel declares
// statically: the reference's rule for the attribute. The request is compared as a size_t, so a
// size past 32 bits is refused rather than cut to its low bits. The attribute belongs to f (one
// function in one context): it is read each time, never remembered, and only ever goes up, only when
// this launch needs it to, since a raise changes the function for every later launch.
void launchWithSharedMemory(CUfunction f, unsigned blocks, unsigned threads, size_t sharedBytes, void** args,
                            CUstream stream) {
  CUdevice dev = 0;
  CU_CHECK(cuCtxGetDevice(&dev));
  int optIn = 0, staticBytes = 0, allowed = 0;
  CU_CHECK(cuDeviceGetAttribute(&optIn, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, dev));
  CU_CHECK(cuFuncGetAttribute(&staticBytes, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f));
  CU_CHECK(cuFuncGetAttribute(&allowed, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, f));
  const size_t limit = static_cast<size_t>(optIn - staticBytes);
  if (sharedBytes > limit)
    throw std::length_error("launchWithSharedMemory: " + std::to_string(sharedBytes) +
                            " bytes of dynamic shared memory asked for; this kernel can have at most " +
                            std::to_string(limit) + " bytes on this device");
  if (sharedBytes > static_cast<size_t>(allowed))
    CU_CHECK(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, static_cast<int>(sharedBytes)));
  cuLaunchKernel(f, blocks, 1, 1, threads, 1, 1, static_cast<unsigned>(sharedBytes), stream, args, nullptr);
}

}  // namespace ex16
