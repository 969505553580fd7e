// Wrong (R3): waits for compute before destroying the event, "so that no wait is left on a dead event"
//
// "An event must outlive the waits on it": so the stream is synchronised first, and the pipeline
// returns only once every part has been copied and burned. The values are right, and the event is
// gone; but the caller's thread, which the task frees to prepare the next batch, waits for the
// GPU. In "R1 R3 R4: pipeline returns before anything has run ...", the call waits until the gate
// gives up and `seen == wb::Gate::Waiting` fails.
#include "exercises.hpp"

namespace ex09 {

void pipeline(CUfunction burn, const float* host, CUdeviceptr device, unsigned n, unsigned chunks, unsigned rounds,
              CUstream copies, CUstream compute) {
  CUevent arrived = nullptr;
  CU_CHECK(cuEventCreate(&arrived, CU_EVENT_DISABLE_TIMING));
  try {
    const unsigned per = n / chunks;
    for (unsigned c = 0; c < chunks; ++c) {
      const unsigned first = c * per;
      unsigned count = c + 1 == chunks ? n - first : per;  // the last part takes the remainder
      CUdeviceptr part = device + size_t(first) * sizeof(float);
      CU_CHECK(cuMemcpyHtoDAsync(part, host + first, size_t(count) * sizeof(float), copies));
      CU_CHECK(cuEventRecord(arrived, copies));
      CU_CHECK(cuStreamWaitEvent(compute, arrived, 0));
      void* args[] = {&part, &count, &rounds};
      CU_CHECK(cuLaunchKernel(burn, kBurnBlocks, 1, 1, kBurnThreads, 1, 1, 0, compute, args, nullptr));
    }
    CU_CHECK(cuStreamSynchronize(compute));  // every wait on arrived has happened
  } catch (...) {
    cuEventDestroy(arrived);
    throw;
  }
  CU_CHECK(cuEventDestroy(arrived));
}

}  // namespace ex09
