// Deliberately wrong variants of lesson 09's exercises: each check must fail on them.
#include "exercises.hpp"

#include <cstring>
#include <stdexcept>

namespace ex09 {

// Wrong: "each kernel must run after its copy, so put it in the same stream": every copy and every
// kernel in copies, compute left unused. The values are right, but part i + 1's copy now waits for
// part i's kernel, so the pipeline takes as long as copying and burning one after the other, and
// `pipelineMs <= limit` fails.
void pipeline(CUfunction burn, const float* host, CUdeviceptr device, unsigned n, unsigned chunks, unsigned rounds,
              CUstream copies, CUstream compute) {
  (void)compute;
  const unsigned per = n / chunks;
  for (unsigned c = 0; c < chunks; ++c) {
    const unsigned first = c * per;
    unsigned count = c + 1 == chunks ? n - first : per;
    CUdeviceptr part = device + size_t(first) * sizeof(float);
    CU_CHECK(cuMemcpyHtoDAsync(part, host + first, size_t(count) * sizeof(float), copies));
    void* args[] = {&part, &count, &rounds};
    CU_CHECK(cuLaunchKernel(burn, kBurnBlocks, 1, 1, kBurnThreads, 1, 1, 0, copies, args, nullptr));
  }
}

// Wrong: "looking every kernel up loads it": cuLibraryGetKernel for each kernel the library lists.
// A CUkernel is the process-wide handle; nothing is loaded into the context until a launch needs it.
// The stamp's launch then has to load it while the gate runs, waits until the gate gives up, and
// `whenStamped == wb::Gate::Waiting` fails; burn, never launched, is not loaded either
// (`notLoaded == 0` fails).
void preloadKernels(CUlibrary library) {
#if CUDA_VERSION >= 12040
  unsigned count = 0;
  CU_CHECK(cuLibraryGetKernelCount(&count, library));
  std::vector<CUkernel> kernels(count);
  CU_CHECK(cuLibraryEnumerateKernels(kernels.data(), count, library));
  for (CUkernel listed : kernels) {
    const char* name = nullptr;
    CU_CHECK(cuKernelGetName(&name, listed));
    CUkernel kernel = nullptr;
    CU_CHECK(cuLibraryGetKernel(&kernel, library, name));
  }
#else
  (void)library;
  throw std::runtime_error("preloadKernels needs CUDA 12.4");
#endif
}

StagingRing::StagingRing(unsigned buffers, std::size_t bytesEach) : slots_(buffers), bytesEach_(bytesEach) {
  for (Slot& slot : slots_) {
    CU_CHECK(cuMemAllocHost(&slot.host, bytesEach));
    CU_CHECK(cuEventCreate(&slot.copied, CU_EVENT_DISABLE_TIMING));
  }
}

StagingRing::~StagingRing() {
  for (Slot& slot : slots_) {
    if (slot.used) cuEventSynchronize(slot.copied);
    if (slot.copied) cuEventDestroy(slot.copied);
    if (slot.host) cuMemFreeHost(slot.host);
  }
}

// Wrong: "with two buffers in turn, the older copy is surely done by the time its buffer comes round
// again": the event is recorded but never asked. With the stream held, the third upload overwrites
// the first buffer while the first copy is still pending: it is accepted (`!accepted[2]` fails) and
// the first frame arrives as the third (`... == frames[0]` fails).
bool StagingRing::tryUpload(const void* src, std::size_t bytes, CUdeviceptr dst, CUstream stream) {
  if (bytes > bytesEach_) throw std::invalid_argument("StagingRing::tryUpload: more bytes than a staging buffer holds");
  Slot& slot = slots_.at(next_);
  std::memcpy(slot.host, src, bytes);
  CU_CHECK(cuMemcpyHtoDAsync(dst, slot.host, bytes, stream));
  CU_CHECK(cuEventRecord(slot.copied, stream));
  slot.used = true;
  next_ = (next_ + 1) % slots_.size();
  return true;
}

}  // namespace ex09
