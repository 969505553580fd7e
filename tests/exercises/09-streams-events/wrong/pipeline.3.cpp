// Wrong (R2): records the event before the copy it guards
//
// "Mark the part, then copy it": the event completes when everything before the copy has, so
// each kernel waits for the previous part's copy and may burn its own part while it is still
// arriving. A race that a quick run may win; the graph shows it: in "R1 R2: as a graph ...", the kernels
// wait for 0 1 2 3 copies and `copiesBeforeKernel == want` fails.
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
      CU_CHECK(cuEventRecord(arrived, copies));
      CU_CHECK(cuMemcpyHtoDAsync(part, host + first, size_t(count) * sizeof(float), copies));
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
