// Wrong (R4): remembers in a static variable how far it raised the attribute, for every function alike
//
// "Read the attribute once, it does not change behind my back": it is per function, and a kernel
// loaded again, or its function in another context, starts from the default. After the primary
// context's function was raised to 100 KiB, the second context's function is launched with 100 KiB
// unraised: the launch fails, CU_CHECK throws wb::DriverError, and the last case fails on it.
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
  static int known = -1;
  if (known < 0) CU_CHECK(cuFuncGetAttribute(&known, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, f));
  allowed = known;
  const size_t limit = static_cast<size_t>(optIn - staticBytes);
  if (sharedBytes > limit)
    throw std::length_error("launchWithSharedMemory: " + std::to_string(sharedBytes) +
                            " bytes of dynamic shared memory asked for; this kernel can have at most " +
                            std::to_string(limit) + " bytes on this device");
  if (sharedBytes > static_cast<size_t>(allowed))
  {
    CU_CHECK(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, static_cast<int>(sharedBytes)));
    known = static_cast<int>(sharedBytes);
  }
  CU_CHECK(cuLaunchKernel(f, blocks, 1, 1, threads, 1, 1, static_cast<unsigned>(sharedBytes), stream, args, nullptr));
}

}  // namespace ex16
