// Wrong (R6): makes dev's primary context current for the calls, and leaves it pushed
//
// "Advice and prefetches for dev are issued in dev's context": the engineer pushes dev's primary
// context first, and the pop (and the release) never got written. The caller's thread is left with
// another context current, and a primary context retained. In "R2 R3 R5 R6: placeForKernel returns
// true ...", `wbx::contextStack() == stackBefore` fails (and what is left held is not empty).
#include "exercises.hpp"

namespace ex23 {

// The advice guides where faults put the pages later; the prefetch moves them now, in stream order,
// so the caller's next kernel in stream finds them on dev. Nothing here waits: the prefetch runs
// when the stream reaches it.
bool placeForKernel(CUdeviceptr ptr, size_t bytes, CUdevice dev, CUstream stream) {
  int concurrent = 0;
  CU_CHECK(cuDeviceGetAttribute(&concurrent, CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, dev));
  if (!concurrent) return false;  // neither a device preference nor a prefetch to it is allowed
  CUcontext primary = nullptr;
  CU_CHECK(cuDevicePrimaryCtxRetain(&primary, dev));
  CU_CHECK(cuCtxPushCurrent(primary));  // never popped
  const CUmemLocation where = wb::deviceLocation(dev);
  CU_CHECK(wb::memAdvise(ptr, bytes, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, where));
  CU_CHECK(wb::memPrefetchAsync(ptr, bytes, where, 0, stream));
  return true;
}

}  // namespace ex23
