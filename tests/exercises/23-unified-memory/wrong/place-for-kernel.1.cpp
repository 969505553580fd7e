// Wrong (R3): prefetches in the NULL stream instead of the caller's stream
//
// "The prefetch only has to happen before the kernel; the default stream will do." The NULL (legacy)
// stream is not ordered with a non-blocking stream, so the caller's kernel may start before the pages
// arrive, and the prefetch waits for unrelated work. The check's `gPrefetchStream == s.get()` fails.
#include "exercises.hpp"

namespace ex23 {

bool placeForKernel(CUdeviceptr ptr, size_t bytes, CUdevice dev, CUstream stream) {
  (void)stream;
  int concurrent = 0;
  CU_CHECK(cuDeviceGetAttribute(&concurrent, CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, dev));
  if (!concurrent) return false;
  const CUmemLocation where = wb::deviceLocation(dev);
  CU_CHECK(wb::memAdvise(ptr, bytes, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, where));
  CU_CHECK(wb::memPrefetchAsync(ptr, bytes, where, 0, nullptr));
  return true;
}

}  // namespace ex23
