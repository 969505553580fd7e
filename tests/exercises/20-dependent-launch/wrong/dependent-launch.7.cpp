// Wrong (R3): synchronises the stream after the launch, "so that a kernel's error surfaces here"
//
// "An asynchronous error shows up at the next synchronisation: do it at once, and the caller learns
// which launch failed." It also makes the host wait for everything in the stream, the kernel before
// included, and a framework that launches kernel after kernel gets no overlap at all (and inside a
// capture the synchronisation is refused). In "R1 R3: in the stream given ...", the call waits for
// the check's gate, and `seen == wb::Gate::Waiting` fails.
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
  CU_CHECK(cuStreamSynchronize(stream));  // "report the kernel's errors with the launch"
}

}  // namespace ex20
