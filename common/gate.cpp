#include "gate.hpp"

#include "cuda_check.hpp"
#include "environment.hpp"

#include <string>

#include <utility>

namespace wb {

PinnedWords::PinnedWords(std::size_t count) {
  void* p = nullptr;
  CU_CHECK(cuMemHostAlloc(&p, count * sizeof(unsigned), CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE));
  words_ = static_cast<volatile unsigned*>(p);
  for (std::size_t i = 0; i < count; ++i) words_[i] = 0;
}

PinnedWords::~PinnedWords() { cuMemFreeHost(const_cast<unsigned*>(words_)); }

Gate::Gate(CUfunction gateKernel, CUstream stream, double deadlineSeconds) {
  // Under CUDA_LAUNCH_BLOCKING=1 the launch below would wait for the gate, which waits for open():
  // the stream could never be seen busy, and every gate would run into its deadline.
  if (const std::string on = activeValue(*findEnvVariable("CUDA_LAUNCH_BLOCKING")); !on.empty())
    throw EnvironmentError("CUDA_LAUNCH_BLOCKING",
                           "CUDA_LAUNCH_BLOCKING=" + on + " is set: every launch waits for its kernel, so the gate "
                           "kernel cannot keep work pending. Unset it (env -u CUDA_LAUNCH_BLOCKING ...)");
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

//! [load-first]
StreamKernels StreamKernels::load(CUlibrary library) {
  StreamKernels k;
  for (auto [name, f] : {std::pair{"gate", &k.gate}, {"stamp", &k.stamp}, {"burn", &k.burn}}) {
    CUkernel kernel = nullptr;
    CU_CHECK(cuLibraryGetKernel(&kernel, library, name));
    *f = reinterpret_cast<CUfunction>(kernel);
  }
  PinnedWords words(4);
  words.write(0, 1);  // an open gate: it returns at once
  CUdeviceptr gate = words.device(0), outcome = words.device(1), counter = words.device(2),
              slot = words.device(3);
  unsigned long long deadline = 0;
  CUdeviceptr noData = 0;
  unsigned none = 0;
  void* gateArgs[] = {&gate, &deadline, &outcome};
  void* stampArgs[] = {&counter, &slot};
  void* burnArgs[] = {&noData, &none, &none};  // n = 0: touches nothing
  CU_CHECK(cuLaunchKernel(k.gate, 1, 1, 1, 1, 1, 1, 0, nullptr, gateArgs, nullptr));
  CU_CHECK(cuLaunchKernel(k.stamp, 1, 1, 1, 1, 1, 1, 0, nullptr, stampArgs, nullptr));
  CU_CHECK(cuLaunchKernel(k.burn, 1, 1, 1, 1, 1, 1, 0, nullptr, burnArgs, nullptr));
  CU_CHECK(cuCtxSynchronize());
  return k;
}
//! [load-first]

}  // namespace wb
