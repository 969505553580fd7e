// Wrong (R2): launches for every context, a count of 0 included
//
// "(0 + 255) / 256 blocks of nothing is harmless." A grid of 0 blocks is an invalid launch:
// cuLaunchKernel refuses it, CU_CHECK throws, and the second call of the check (a count of 0 for
// device 0's primary context) fails with "threw".
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
    Pushed current(contexts[i]);
    void* args[] = {&n};
    CU_CHECK(cuLaunchKernel(reinterpret_cast<CUfunction>(count), (n + 255) / 256, 1, 1, 256, 1, 1, 0, nullptr, args,
                            nullptr));
    CU_CHECK(cuCtxSynchronize());
  }
  return *counter;
}

}  // namespace ex08
