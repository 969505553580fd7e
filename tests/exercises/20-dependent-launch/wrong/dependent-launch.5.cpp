// Wrong (R1): swaps the grid and the block (blocks threads, threads blocks)
//
// cuLaunchKernel's order is grid, then block; a config filled from memory of another API puts them the
// other way round. The node has 64 blocks of 3 threads: "another grid than 3 x 1 x 1 blocks" and
// "another block than 64 x 1 x 1 threads"; 2048 blocks of one thread is no refusal either.
#include "exercises.hpp"

namespace ex20 {

void launchDependent(CUfunction f, unsigned blocks, unsigned threads, void** args, CUstream stream) {
  CUlaunchAttribute attr{};
  attr.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
  attr.value.programmaticStreamSerializationAllowed = 1;
  CUlaunchConfig config{};
  config.gridDimX = threads;
  config.gridDimY = config.gridDimZ = 1;
  config.blockDimX = blocks;
  config.blockDimY = config.blockDimZ = 1;
  config.sharedMemBytes = 0;
  config.hStream = stream;
  config.attrs = &attr;
  config.numAttrs = 1;
  CU_CHECK(cuLaunchKernelEx(&config, f, args, nullptr));
}

}  // namespace ex20
