// Deliberately wrong variants of lesson 08's exercises: each check must fail on them.
#include "exercises.hpp"

#include <set>

namespace ex08 {

// Wrong: counts right, then reads the result "like any device variable": cuLibraryGetGlobal of
// deviceCounter in the caller's context and cuMemcpyDtoH. That is the caller's context's own copy,
// holding only the threads launched there (and never reset), so `total1 == sum(first)` fails.
unsigned long long countEverywhere(CUlibrary counters, const std::vector<CUcontext>& contexts,
                                   const std::vector<unsigned>& threads) {
  CUkernel count = nullptr;
  CU_CHECK(cuLibraryGetKernel(&count, counters, "count"));
  CUdeviceptr managed = 0;
  size_t bytes = 0;
  CU_CHECK(cuCtxPushCurrent(contexts.at(0)));
  CU_CHECK(cuLibraryGetManaged(&managed, &bytes, counters, "managedCounter"));
  CUcontext popped = nullptr;
  CU_CHECK(cuCtxPopCurrent(&popped));
  *reinterpret_cast<unsigned long long*>(managed) = 0;
  for (size_t i = 0; i < contexts.size(); ++i) {
    CU_CHECK(cuCtxPushCurrent(contexts[i]));
    unsigned n = threads.at(i);
    void* args[] = {&n};
    CU_CHECK(cuLaunchKernel(reinterpret_cast<CUfunction>(count), (n + 255) / 256, 1, 1, 256, 1, 1, 0, nullptr, args,
                            nullptr));
    CU_CHECK(cuCtxSynchronize());
    CU_CHECK(cuCtxPopCurrent(&popped));
  }
  CUdeviceptr counter = 0;
  CU_CHECK(cuLibraryGetGlobal(&counter, &bytes, counters, "deviceCounter"));
  unsigned long long total = 0;
  CU_CHECK(cuMemcpyDtoH(&total, counter, sizeof total));
  return total;
}

// Wrong: "the variable lives on the device", so it is reset once per device, in that device's
// primary context. The two contexts created on device 0 keep their own copies and their counts,
// and `c.deviceCounterHere() == 0` fails for them.
void resetPerContext(CUlibrary counters, const std::vector<CUcontext>& contexts) {
  std::set<CUdevice> devices;
  for (CUcontext ctx : contexts) {
    CU_CHECK(cuCtxPushCurrent(ctx));
    CUdevice dev = 0;
    CU_CHECK(cuCtxGetDevice(&dev));
    devices.insert(dev);
    CUcontext popped = nullptr;
    CU_CHECK(cuCtxPopCurrent(&popped));
  }
  for (CUdevice dev : devices) {
    CUcontext primary = nullptr;
    CU_CHECK(cuDevicePrimaryCtxRetain(&primary, dev));
    CU_CHECK(cuCtxPushCurrent(primary));
    CUdeviceptr address = 0;
    size_t bytes = 0;
    CU_CHECK(cuLibraryGetGlobal(&address, &bytes, counters, "deviceCounter"));
    CU_CHECK(cuMemsetD8(address, 0, bytes));
    CU_CHECK(cuCtxPopCurrent(&primary));
    CU_CHECK(cuDevicePrimaryCtxRelease(dev));
  }
}

}  // namespace ex08
