// Wrong (R7): takes a failed attribute query for "no concurrent managed access"
//
// "If the driver cannot say, assume the device cannot": concurrent starts at 0 and the query's
// result is not checked, so a failing driver (no context, a lost device) is reported as a device
// that only lacks a feature, and the caller carries on without the prefetch. In "R7: a failed
// attribute query, advice or prefetch is thrown", the failed cuDeviceGetAttribute returns false and
// `f.threw` fails.
#include "exercises.hpp"

namespace ex23 {

// The advice guides where faults put the pages later; the prefetch moves them now, in stream order,
// so the caller's next kernel in stream finds them on dev. Nothing here waits: the prefetch runs
// when the stream reaches it.
bool placeForKernel(CUdeviceptr ptr, size_t bytes, CUdevice dev, CUstream stream) {
  int concurrent = 0;
  cuDeviceGetAttribute(&concurrent, CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, dev);  // 0 if it fails
  if (!concurrent) return false;  // neither a device preference nor a prefetch to it is allowed
  const CUmemLocation where = wb::deviceLocation(dev);
  CU_CHECK(wb::memAdvise(ptr, bytes, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, where));
  CU_CHECK(wb::memPrefetchAsync(ptr, bytes, where, 0, stream));
  return true;
}

}  // namespace ex23
