// Wrong (R5): leaves its event behind when a call in the middle fails
//
// CU_CHECK on every call, and the event destroyed at the end: the common shape, and an exception
// thrown by CU_CHECK skips the end. A server that survives the error (and retries) leaks an event
// each time. In "R5: a cuStreamWaitEvent or a kernel launch that fails ...", `left == ""` fails
// ("1 event more").
#include "exercises.hpp"

namespace ex09 {

void pipeline(CUfunction burn, const float* host, CUdeviceptr device, unsigned n, unsigned chunks, unsigned rounds,
              CUstream copies, CUstream compute) {
  CUevent arrived = nullptr;
  CU_CHECK(cuEventCreate(&arrived, CU_EVENT_DISABLE_TIMING));
  {
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
  }
  CU_CHECK(cuEventDestroy(arrived));
}

}  // namespace ex09
