// Wrong (R1): puts the block count in the grid's y dimension, a grid of one column
//
// "blocks, then threads" read as the grid's rows: cuLaunchKernel takes gridDimX first. The launch
// runs as many blocks, but each has blockIdx.x 0, so smem_sum writes every block's sum into the
// first slot and the second stays 0: in "R1 R2 R3: 16 KiB in a stream held by a gate ...",
// `sum.sumsRight()` fails.
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
  CU_CHECK(cuLaunchKernel(f, 1, blocks, 1, threads, 1, 1, static_cast<unsigned>(sharedBytes), stream, args,
                          nullptr));  // the blocks as a column of the grid
}

}  // namespace ex16
