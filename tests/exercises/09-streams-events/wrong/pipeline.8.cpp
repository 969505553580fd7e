// Wrong (R1): launches as many blocks as the part needs, not the kBurnBlocks blocks the task fixes
//
// "One thread per element, rounded up to whole blocks": the usual way to size a grid, and burn
// strides over whatever grid it gets, so every value comes out right. But the task fixes the launch
// shape (the check's references and the timed comparison are measured with it), and 1024 blocks
// per 16 MiB part is not it. In "R1 R2: as a graph ...", the kernel nodes' shape differs and
// `otherShapes == 0` fails.
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
      const unsigned blocks = (count + kBurnThreads - 1) / kBurnThreads;
      CU_CHECK(cuLaunchKernel(burn, blocks, 1, 1, kBurnThreads, 1, 1, 0, compute, args, nullptr));
    }
  } catch (...) {
    cuEventDestroy(arrived);
    throw;
  }
  CU_CHECK(cuEventDestroy(arrived));
}

}  // namespace ex09
