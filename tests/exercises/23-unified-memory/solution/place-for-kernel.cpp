// Reference solution of lesson 23's exercise place-for-kernel (lessons/23-unified-memory/exercises.cpp).
#include "exercises.hpp"

namespace ex23 {

// The advice guides where faults put the pages later; the prefetch moves them now, in stream order,
// so the caller's next kernel in stream finds them on dev. Nothing here waits: the prefetch runs
// when the stream reaches it.
bool placeForKernel(CUdeviceptr ptr, size_t bytes, CUdevice dev, CUstream stream) {
  int concurrent = 0;
  CU_CHECK(cuDeviceGetAttribute(&concurrent, CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, dev));
  if (!concurrent) return false;  // neither a device preference nor a prefetch to it is allowed
  const CUmemLocation where = wb::deviceLocation(dev);
  CU_CHECK(wb::memAdvise(ptr, bytes, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, where));
  CU_CHECK(wb::memPrefetchAsync(ptr, bytes, where, 0, stream));
  return true;
}

}  // namespace ex23
