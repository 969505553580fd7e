// Wrong (R5): takes the device's opt-in limit as the limit, forgetting the kernel's static shared memory
//
// "CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN is what a block can have": the static
// shared memory counts against it. A request 4 bytes past the opt-in limit minus smem_sum's 32
// static bytes is not refused: cuFuncSetAttribute is asked for more than the kernel may have, fails,
// and CU_CHECK throws wb::DriverError instead of std::length_error, so the case fails on the throw.
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
  (void)staticBytes;
  const size_t limit = static_cast<size_t>(optIn);
  if (sharedBytes > limit)
    throw std::length_error("launchWithSharedMemory: " + std::to_string(sharedBytes) +
                            " bytes of dynamic shared memory asked for; this kernel can have at most " +
                            std::to_string(limit) + " bytes on this device");
  if (sharedBytes > static_cast<size_t>(allowed))
    CU_CHECK(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, static_cast<int>(sharedBytes)));
  CU_CHECK(cuLaunchKernel(f, blocks, 1, 1, threads, 1, 1, static_cast<unsigned>(sharedBytes), stream, args, nullptr));
}

}  // namespace ex16
