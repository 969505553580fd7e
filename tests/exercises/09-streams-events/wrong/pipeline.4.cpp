// Wrong (R1): gives every part n / chunks floats, so the remainder is never copied or burned
//
// Right whenever chunks divides n, as it does in most examples. The check's first case has 5
// floats more than 8 equal parts: they keep the -1.0 the check seeded, and `wrong == 0` fails.
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
      unsigned count = per;
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
