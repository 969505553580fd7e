// Wrong (R5): makes each context current with cuCtxSetCurrent, and leaves the last one current
//
// "Set the context, launch, next." cuCtxSetCurrent replaces the top of the caller's stack instead of
// pushing onto it, and nothing puts the caller's context back: `stackAfterFirst == stack` fails.
#include "exercises.hpp"

namespace ex08 {

unsigned long long countEverywhere(CUlibrary counters, const std::vector<CUcontext>& contexts,
                                   const std::vector<unsigned>& threads) {
  CUdeviceptr address = 0;
  size_t bytes = 0;
  CU_CHECK(cuCtxSetCurrent(contexts.at(0)));
  CU_CHECK(cuLibraryGetManaged(&address, &bytes, counters, "managedCounter"));
  auto* counter = reinterpret_cast<unsigned long long*>(address);
  CUkernel count = nullptr;
  CU_CHECK(cuLibraryGetKernel(&count, counters, "count"));
  *counter = 0;
  for (size_t i = 0; i < contexts.size(); ++i) {
    unsigned n = threads.at(i);
    if (n == 0) continue;
    CU_CHECK(cuCtxSetCurrent(contexts[i]));
    void* args[] = {&n};
    CU_CHECK(cuLaunchKernel(reinterpret_cast<CUfunction>(count), (n + 255) / 256, 1, 1, 256, 1, 1, 0, nullptr, args,
                            nullptr));
    CU_CHECK(cuCtxSynchronize());
  }
  return *counter;
}

}  // namespace ex08
