// Wrong (R1): never sets managedCounter to 0: "a global starts at zero"
//
// It does, once per process. The variable outlives the call, so the second call returns its own sum
// plus the first's: `total2 == sum(second)` fails.
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
  for (size_t i = 0; i < contexts.size(); ++i) {
    unsigned n = threads.at(i);
    if (n == 0) continue;
    Pushed current(contexts[i]);
    void* args[] = {&n};
    CU_CHECK(cuLaunchKernel(reinterpret_cast<CUfunction>(count), (n + 255) / 256, 1, 1, 256, 1, 1, 0, nullptr, args,
                            nullptr));
    CU_CHECK(cuCtxSynchronize());
  }
  return *counter;
}

}  // namespace ex08
