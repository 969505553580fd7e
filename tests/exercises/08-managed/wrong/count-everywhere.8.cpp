// Wrong (R6): waits for each launch with cuCtxSynchronize but does not check what it returns
//
// "Synchronising only waits: the launch was checked already." But a launch returns before the
// kernel runs, and what the kernel did (a fault, a trap) comes back from the wait: ignored, the call
// returns a total that misses the failed kernel's counts. In "R5 R6: when the second launch fails,
// or the first wait ...", the failed cuCtxSynchronize is not thrown and `threw` is false.
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
    Pushed current(contexts.at(0));  // cuLibraryGetManaged wants a context; any one gives the same pointer
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
    cuCtxSynchronize();
  }
  return *counter;
}

}  // namespace ex08
