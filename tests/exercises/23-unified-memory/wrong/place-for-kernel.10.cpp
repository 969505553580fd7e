// Wrong (R7): ignores what the advice returns
//
// "Advice is only a hint, and the prefetch does the real work": but a refused advice is a wrong
// pointer, size or device, or the sticky error of a failed kernel, and the caller must hear of it.
// In "R7: a failed attribute query, advice or prefetch is thrown", the failed cuMemAdvise is
// swallowed and `f.threw` fails.
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
  (void)wb::memAdvise(ptr, bytes, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, where);  // a hint: its error does not matter
  CU_CHECK(wb::memPrefetchAsync(ptr, bytes, where, 0, stream));
  return true;
}

}  // namespace ex23
