// Wrong (R2): launches threads / 256 blocks, dropping the last, partial block
//
// Integer division where a rounding up belongs: a count that is not a multiple of 256 loses its
// remainder (1000 threads count 768), so `total1 == sum(first)` fails (and a count under 256 makes a
// grid of 0 blocks, which cuLaunchKernel refuses).
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
    CU_CHECK(cuLaunchKernel(reinterpret_cast<CUfunction>(count), n / 256, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr));
    CU_CHECK(cuCtxSynchronize());
  }
  return *counter;
}

}  // namespace ex08
