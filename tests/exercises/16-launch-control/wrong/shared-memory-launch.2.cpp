// Wrong (R5): compares the request with the limit as an int, so a size past 32 bits passes as its low bits
//
// "The driver's attributes are ints": sharedBytes is cast to int for the comparison. 4 GiB + 16 KiB
// becomes 16 KiB, is not refused, and is launched with 16 KiB (the launch's unsigned takes the same
// low bits): `r.refused` fails ("a comparison in 32 bits sees 16 KiB"), and `!r.launched` with it.
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
  const int limit = optIn - staticBytes;
  if (static_cast<int>(sharedBytes) > limit)
    throw std::length_error("launchWithSharedMemory: " + std::to_string(sharedBytes) +
                            " bytes of dynamic shared memory asked for; this kernel can have at most " +
                            std::to_string(limit) + " bytes on this device");
  if (static_cast<int>(sharedBytes) > allowed)
    CU_CHECK(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, static_cast<int>(sharedBytes)));
  CU_CHECK(cuLaunchKernel(f, blocks, 1, 1, threads, 1, 1, static_cast<unsigned>(sharedBytes), stream, args, nullptr));
}

}  // namespace ex16
