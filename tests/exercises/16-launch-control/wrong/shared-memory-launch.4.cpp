// Wrong (R2): launches in the default (legacy) stream, not in the stream it was given
//
// "The NULL stream is the default": a kernel in the legacy stream does not wait for the work the
// caller put in its non-blocking stream. Behind the check's gate the kernel has run once the legacy
// stream is synchronised: `!early` fails ("the kernel ran before the work already in the stream").
#include "exercises.hpp"

#include <stdexcept>
#include <string>

namespace ex16 {

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
  CU_CHECK(cuLaunchKernel(f, blocks, 1, 1, threads, 1, 1, static_cast<unsigned>(sharedBytes), nullptr, args, nullptr));
  (void)stream;
}

}  // namespace ex16
