// Wrong (R2): "each kernel must run after its copy, so put it in the same stream": all in copies
//
// The values are right, but part i + 1's copy now waits behind part i's kernel, so the pipeline
// takes as long as copying and burning one after the other. In "R1 R2: as a graph ...",
// `copiesAfterAKernel == 0` fails; in the timed case, `pipelineMs <= limit` fails.
#include "exercises.hpp"

namespace ex09 {

void pipeline(CUfunction burn, const float* host, CUdeviceptr device, unsigned n, unsigned chunks, unsigned rounds,
              CUstream copies, CUstream compute) {
  (void)compute;
  const unsigned per = n / chunks;
  for (unsigned c = 0; c < chunks; ++c) {
    const unsigned first = c * per;
    unsigned count = c + 1 == chunks ? n - first : per;  // the last part takes the remainder
    CUdeviceptr part = device + size_t(first) * sizeof(float);
    CU_CHECK(cuMemcpyHtoDAsync(part, host + first, size_t(count) * sizeof(float), copies));
    void* args[] = {&part, &count, &rounds};
    CU_CHECK(cuLaunchKernel(burn, kBurnBlocks, 1, 1, kBurnThreads, 1, 1, 0, copies, args, nullptr));
  }
}

}  // namespace ex09
