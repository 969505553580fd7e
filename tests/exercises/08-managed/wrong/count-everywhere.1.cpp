// Wrong (R3): counts right, then reads the total from deviceCounter in the caller's context, "like any device variable"
//
// cuLibraryGetGlobal of deviceCounter and cuMemcpyDtoH: that is the caller's context's own copy,
// holding only the threads launched there (and never set to 0), so `total1 == sum(first)` fails.
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
    CU_CHECK(cuCtxSynchronize());
  }
  CUdeviceptr own = 0;
  CU_CHECK(cuLibraryGetGlobal(&own, &bytes, counters, "deviceCounter"));
  unsigned long long total = 0;
  CU_CHECK(cuMemcpyDtoH(&total, own, sizeof total));
  return total;
}

}  // namespace ex08
