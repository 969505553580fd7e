// Wrong (R3): launches in every context and reads the counter at once, without waiting for the kernels
//
// "The host reads managed memory directly; the kernels have updated it." A launch only enqueues the
// kernel. With a gate kernel holding device 0's primary context, the launch there has not run when
// the counter is read, and `total == sum(counts)` fails.
#include "exercises.hpp"

namespace ex08 {

namespace {

class Pushed {
 public:
  explicit Pushed(CUcontext ctx) { CU_CHECK(cuCtxPushCurrent(ctx)); }
  ~Pushed() {
    CUcontext popped = nullptr;
    cuCtxPopCurrent(&popped);
  }
  Pushed(const Pushed&) = delete;
  Pushed& operator=(const Pushed&) = delete;
};

}  // namespace

unsigned long long countEverywhere(CUlibrary counters, const std::vector<CUcontext>& contexts,
                                   const std::vector<unsigned>& threads) {
  CUdeviceptr address = 0;
  size_t bytes = 0;
  {
    Pushed current(contexts.at(0));
    CU_CHECK(cuLibraryGetManaged(&address, &bytes, counters, "managedCounter"));
  }
  auto* counter = reinterpret_cast<unsigned long long*>(address);
  CUkernel count = nullptr;
  CU_CHECK(cuLibraryGetKernel(&count, counters, "count"));
  *counter = 0;
  for (size_t i = 0; i < contexts.size(); ++i) {
    unsigned n = threads.at(i);
    if (n == 0) continue;
    Pushed current(contexts[i]);
    void* args[] = {&n};
    CU_CHECK(cuLaunchKernel(reinterpret_cast<CUfunction>(count), (n + 255) / 256, 1, 1, 256, 1, 1, 0, nullptr, args,
                            nullptr));
  }
  return *counter;
}

}  // namespace ex08
