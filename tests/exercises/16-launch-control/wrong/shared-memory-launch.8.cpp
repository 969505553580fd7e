// Wrong (R8): makes the device's primary context current before it launches
//
// "A launch goes to the device's context, as in lesson 04": cuCtxSetCurrent(primary) replaces
// whatever the caller had current. From the primary context nothing shows; from a context of the
// caller's own, its stack now has the primary context on top, and f, a function of the caller's
// context, is launched from another one. In "R1 R4 R8: after a launch of the primary context's
// function ...", the driver refuses that launch on an H200 (driver 580) and the case ends on the
// wb::DriverError; were it accepted, `stackAfter == stack` would fail.
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
  CUcontext primary = nullptr;  // "a launch goes to the device's own context"
  CU_CHECK(cuDevicePrimaryCtxRetain(&primary, dev));
  CU_CHECK(cuCtxSetCurrent(primary));
  CU_CHECK(cuDevicePrimaryCtxRelease(dev));  // current now: "it stays alive"
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
  CU_CHECK(cuLaunchKernel(f, blocks, 1, 1, threads, 1, 1, static_cast<unsigned>(sharedBytes), stream, args, nullptr));
}

}  // namespace ex16
