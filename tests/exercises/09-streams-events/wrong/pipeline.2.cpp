// Wrong (R2): launches each kernel in compute without waiting for its part's copy
//
// "Streams run in order, and each copy was enqueued before its kernel": but only within one
// stream. compute has no reason to wait for copies, so each part is burned before it has arrived
// (here while the gate holds copies), and the copy then overwrites it with the unburned data. In
// the first case, `wrong == 0` fails; in "R1 R2: as a graph ...", compute never joins the capture and
// `kernelsCaptured == chunks` fails.
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
