// Wrong (R4): makes an event per part and never destroys them
//
// "An event recorded in a stream must live until the wait has happened", so none is destroyed; a
// server that calls pipeline per batch leaks chunks events per batch. The reference: destroying an
// event the device has not reached yet is allowed, the driver releases it later. In the first case,
// `left == ""` fails ("8 events more").
#include "exercises.hpp"

namespace ex09 {

void pipeline(CUfunction burn, const float* host, CUdeviceptr device, unsigned n, unsigned chunks, unsigned rounds,
              CUstream copies, CUstream compute) {
  const unsigned per = n / chunks;
  for (unsigned c = 0; c < chunks; ++c) {
    const unsigned first = c * per;
    unsigned count = c + 1 == chunks ? n - first : per;  // the last part takes the remainder
    CUdeviceptr part = device + size_t(first) * sizeof(float);
    CU_CHECK(cuMemcpyHtoDAsync(part, host + first, size_t(count) * sizeof(float), copies));
    CUevent arrived = nullptr;
    CU_CHECK(cuEventCreate(&arrived, CU_EVENT_DISABLE_TIMING));
    CU_CHECK(cuEventRecord(arrived, copies));
    CU_CHECK(cuStreamWaitEvent(compute, arrived, 0));
    void* args[] = {&part, &count, &rounds};
    CU_CHECK(cuLaunchKernel(burn, kBurnBlocks, 1, 1, kBurnThreads, 1, 1, 0, compute, args, nullptr));
  }
}

}  // namespace ex09
