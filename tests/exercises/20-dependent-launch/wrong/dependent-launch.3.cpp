// Wrong (R2): names the attribute but leaves its value at 0
//
// A zeroed CUlaunchAttribute with only its id set: programmaticStreamSerializationAllowed is 0, which
// asks for ordinary stream order. The capture records a plain edge: `edges[0].type ==
// CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC` fails.
#include "exercises.hpp"

namespace ex20 {

void launchDependent(CUfunction f, unsigned blocks, unsigned threads, void** args, CUstream stream) {
  CUlaunchAttribute attr{};
  attr.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
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
