// Reference solution of lesson 20's exercise dependent-launch (lessons/20-dependent-launch/exercises.cpp).
#include "exercises.hpp"

namespace ex20 {

// The attribute says that the kernel resolves its dependency on the kernel before it in the stream
// itself (griddepcontrol.wait), so the driver may launch it once that kernel has triggered. It lives
// in the config's array, counted by numAttrs; cuLaunchKernelEx copies what it needs before returning.
void launchDependent(CUfunction f, unsigned blocks, unsigned threads, void** args, CUstream stream) {
  CUlaunchAttribute attr{};
  attr.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
  attr.value.programmaticStreamSerializationAllowed = 1;
  CUlaunchConfig config{};
  config.gridDimX = blocks;
  config.gridDimY = config.gridDimZ = 1;
  config.blockDimX = threads;
  config.blockDimY = config.blockDimZ = 1;
  config.sharedMemBytes = 0;
  config.hStream = stream;
  config.attrs = &attr;
  config.numAttrs = 1;
  CU_CHECK(cuLaunchKernelEx(&config, f, args, nullptr));
}

}  // namespace ex20
