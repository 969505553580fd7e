// Wrong (R5): does not check what cuLaunchKernel returns, "a launch error shows at the next synchronisation"
//
// The runtime's habit: a <<<...>>> launch returns nothing, and errors surface later. But
// cuLaunchKernel returns its error at once (too many resources, an invalid handle), the kernel is
// then not enqueued, and the caller synchronises and reads a part that was never burned. In "R5: a
// cuStreamWaitEvent or a kernel launch that fails ...", the third launch fails, pipeline returns,
// and `outcome != "returned"` fails.
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
      cuLaunchKernel(burn, kBurnBlocks, 1, 1, kBurnThreads, 1, 1, 0, compute, args, nullptr);  // errors come later
    }
  } catch (...) {
    cuEventDestroy(arrived);
    throw;
  }
  CU_CHECK(cuEventDestroy(arrived));
}

}  // namespace ex09
