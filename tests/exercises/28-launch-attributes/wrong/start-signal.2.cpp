// Wrong (R2): the attribute set but not counted in numAttrs
//
// attrs points at the attribute and numAttrs stays 0: the driver reads no attribute, and the event
// is never recorded by this launch.
#include "exercises.hpp"

namespace ex28 {

// The event is part of the launch: it fires when the blocks have begun, which no event recorded
// after the launch can express.
void launchSignallingStart(CUfunction f, unsigned blocks, unsigned threads, void** args, CUstream stream,
                           CUevent started) {
#if CUDA_VERSION >= 12030
  CUlaunchAttribute a{};
  a.id = CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT;
  a.value.launchCompletionEvent.event = started;
  a.value.launchCompletionEvent.flags = 0;
  CUlaunchConfig config{};
  config.gridDimX = blocks;
  config.gridDimY = config.gridDimZ = 1;
  config.blockDimX = threads;
  config.blockDimY = config.blockDimZ = 1;
  config.hStream = stream;
  config.attrs = &a;
  CU_CHECK(cuLaunchKernelEx(&config, f, args, nullptr));
#else
  (void)f, (void)blocks, (void)threads, (void)args, (void)stream, (void)started;
  wb::throwDriverError(CUDA_ERROR_NOT_SUPPORTED, "the launch completion event needs CUDA 12.3", __FILE__, __LINE__);
#endif
}

}  // namespace ex28
