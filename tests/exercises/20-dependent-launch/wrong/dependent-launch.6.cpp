// Wrong (R4): ignores what cuLaunchKernelEx returns
//
// "Launches are asynchronous, errors come later": a refused launch is reported by the launch call
// itself, and dropping it loses it. The launch of 2048 threads per block is refused without a throw
// ("did not throw"), and the injected CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES too.
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
  config.hStream = stream;
  config.attrs = &attr;
  config.numAttrs = 1;
  cuLaunchKernelEx(&config, f, args, nullptr);
}

}  // namespace ex20
