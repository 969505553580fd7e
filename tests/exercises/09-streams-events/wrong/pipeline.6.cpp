// Wrong (R2): enqueues every copy first, then one wait on an event recorded after the last copy
//
// "Copies first, kernels after, one event between them" keeps the two streams apart and the values
// right, but every kernel now waits for the last part to arrive: no part is burned while another is
// copied. In "R1 R2: as a graph ...", each kernel waits for all 4 copies and `copiesBeforeKernel == want`
// fails; in the timed case, `pipelineMs <= limit` fails.
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
      const unsigned count = c + 1 == chunks ? n - first : per;  // the last part takes the remainder
      CU_CHECK(cuMemcpyHtoDAsync(device + size_t(first) * sizeof(float), host + first, size_t(count) * sizeof(float),
                                 copies));
    }
    CU_CHECK(cuEventRecord(arrived, copies));
    CU_CHECK(cuStreamWaitEvent(compute, arrived, 0));
    for (unsigned c = 0; c < chunks; ++c) {
      const unsigned first = c * per;
      unsigned count = c + 1 == chunks ? n - first : per;
      CUdeviceptr part = device + size_t(first) * sizeof(float);
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
