// Wrong (R2): fills in the attribute but leaves numAttrs at 0
//
// The config's attrs points at the attribute, so it looks set; numAttrs says how many of them the
// driver reads, and 0 reads none. The capture records a plain edge: `edges[0].type ==
// CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC` fails.
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
  CU_CHECK(cuLaunchKernelEx(&config, f, args, nullptr));
}

}  // namespace ex20
