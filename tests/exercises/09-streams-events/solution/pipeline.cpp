// Reference solution of lesson 09's exercise pipeline (lessons/09-streams-events/exercises.cpp).
#include "exercises.hpp"

namespace ex09 {

// Two streams, so the copy engine and the SMs each have a queue of their own: part i + 1's copy is
// behind part i's copy in copies, not behind part i's kernel. One event orders each kernel after its
// own part's copy and after nothing else: cuStreamWaitEvent takes the record current at its call, so
// the same event can be recorded again for the next part. Destroying it at the end does not cancel
// the waits already enqueued; the driver releases it once the device is past it. A call that fails
// part way throws, and the event goes with the exception.
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
  } catch (...) {
    cuEventDestroy(arrived);
    throw;
  }
  CU_CHECK(cuEventDestroy(arrived));
}

}  // namespace ex09
