#include "gate.hpp"

#include "cuda_check.hpp"

namespace wb {

PinnedWords::PinnedWords(std::size_t count) {
  void* p = nullptr;
  CU_CHECK(cuMemHostAlloc(&p, count * sizeof(unsigned), CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE));
  words_ = static_cast<volatile unsigned*>(p);
  for (std::size_t i = 0; i < count; ++i) words_[i] = 0;
}

PinnedWords::~PinnedWords() { cuMemFreeHost(const_cast<unsigned*>(words_)); }

Gate::Gate(CUfunction gateKernel, CUstream stream, double deadlineSeconds) {
  CUdeviceptr gate = words_.device(0), outcome = words_.device(1);
  unsigned long long deadlineNs = static_cast<unsigned long long>(deadlineSeconds * 1e9);
  void* args[] = {&gate, &deadlineNs, &outcome};
  CU_CHECK(cuEventCreate(&done_, CU_EVENT_DISABLE_TIMING));
  CU_CHECK(cuLaunchKernel(gateKernel, 1, 1, 1, 1, 1, 1, 0, stream, args, nullptr));
  CU_CHECK(cuEventRecord(done_, stream));
}

Gate::~Gate() {
  open();
  cuEventSynchronize(done_);  // the kernel has ended: its words may be freed
  cuEventDestroy(done_);
}

}  // namespace wb
