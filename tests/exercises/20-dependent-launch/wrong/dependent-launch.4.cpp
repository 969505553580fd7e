// Wrong (R1): never sets the config's stream, so the kernel goes to the legacy default stream
//
// A zeroed CUlaunchConfig has hStream NULL: the legacy stream, not the stream given. The capture of the
// check's stream holds one kernel, not two ("another number of kernels than 2"); outside a capture the
// kernel runs while the gate still holds the stream given ("ran before the work already in the stream").
#include "exercises.hpp"

namespace ex20 {

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
  config.attrs = &attr;
  (void)stream;
  config.numAttrs = 1;
  CU_CHECK(cuLaunchKernelEx(&config, f, args, nullptr));
}

}  // namespace ex20
