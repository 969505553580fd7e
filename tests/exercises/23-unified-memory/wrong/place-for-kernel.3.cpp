// Wrong (R4): places the range on the current context's device instead of dev
//
// "The kernel runs where my context is": the caller named dev, and a multi-GPU library is often called
// with another device's context current. With device 0's context current and dev = 1, the check's
// `preferred(m) == dev1` fails.
// Two devices: with one GPU the current context's device is always dev.
#include "exercises.hpp"

namespace ex23 {

bool placeForKernel(CUdeviceptr ptr, size_t bytes, CUdevice dev, CUstream stream) {
  int concurrent = 0;
  CU_CHECK(cuDeviceGetAttribute(&concurrent, CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, dev));
  if (!concurrent) return false;
  CUdevice current = 0;
  CU_CHECK(cuCtxGetDevice(&current));
  const CUmemLocation where = wb::deviceLocation(current);
  CU_CHECK(wb::memAdvise(ptr, bytes, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, where));
  CU_CHECK(wb::memPrefetchAsync(ptr, bytes, where, 0, stream));
  return true;
}

}  // namespace ex23
