// Reference solution of lesson 08's exercise count-everywhere (lessons/08-managed/exercises.cpp).
#include "exercises.hpp"

namespace ex08 {

namespace {

// Pushes a context for a scope and pops it at the end, also when a call in between throws, so the
// caller's context stack is as it was.
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

// One __managed__ variable is one allocation for the whole process: cuLibraryGetManaged gives the
// same pointer whatever context asks, and kernels in every context, on every device, add to it.
// The host writes it before any kernel runs and reads it once the last kernel is done: before
// that, the value is not final, and on a device without concurrent managed access the host must
// not touch managed memory at all while a kernel runs. Each launch is waited for before the next:
// count's atomicAdd is atomic among the threads of one device only, so kernels on two devices
// adding to the variable at the same time could lose counts (that would take atomicAdd_system).
// The grid is rounded up to whole blocks (the kernel ignores the threads past n), and a count of 0
// launches nothing: a grid of 0 blocks is an error.
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
    CU_CHECK(cuCtxSynchronize());
  }
  return *counter;
}

}  // namespace ex08
