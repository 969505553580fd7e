// Wrong (R2): an ordinary event recorded after the launch
//
// cuEventRecord completes the event when the work before it in the stream has completed: when the
// kernel has ended, not when its blocks have begun. The capture records a default edge.
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
  (void)a;
  CU_CHECK(cuLaunchKernelEx(&config, f, args, nullptr));
  CU_CHECK(cuEventRecord(started, stream));
#else
  (void)f, (void)blocks, (void)threads, (void)args, (void)stream, (void)started;
  wb::throwDriverError(CUDA_ERROR_NOT_SUPPORTED, "the launch completion event needs CUDA 12.3", __FILE__, __LINE__);
#endif
}

}  // namespace ex28
