// Wrong (R5): pushes and pops each context with CU_CHECK around the launch, so a failed launch leaves it pushed
//
// Right as long as nothing fails. When the launch in the second context is refused, CU_CHECK throws
// between the push and the pop, and the caller's thread keeps that context on top of its stack:
// `stackAfter == stack` fails.
#include "exercises.hpp"

namespace ex08 {

unsigned long long countEverywhere(CUlibrary counters, const std::vector<CUcontext>& contexts,
                                   const std::vector<unsigned>& threads) {
  CUdeviceptr address = 0;
  size_t bytes = 0;
  CUcontext popped = nullptr;
  CU_CHECK(cuCtxPushCurrent(contexts.at(0)));
  CU_CHECK(cuLibraryGetManaged(&address, &bytes, counters, "managedCounter"));
  CU_CHECK(cuCtxPopCurrent(&popped));
  auto* counter = reinterpret_cast<unsigned long long*>(address);
  CUkernel count = nullptr;
  CU_CHECK(cuLibraryGetKernel(&count, counters, "count"));
  *counter = 0;
  for (size_t i = 0; i < contexts.size(); ++i) {
    unsigned n = threads.at(i);
    if (n == 0) continue;
    CU_CHECK(cuCtxPushCurrent(contexts[i]));
    void* args[] = {&n};
    CU_CHECK(cuLaunchKernel(reinterpret_cast<CUfunction>(count), (n + 255) / 256, 1, 1, 256, 1, 1, 0, nullptr, args,
                            nullptr));
    CU_CHECK(cuCtxSynchronize());
    CU_CHECK(cuCtxPopCurrent(&popped));
  }
  return *counter;
}

}  // namespace ex08
