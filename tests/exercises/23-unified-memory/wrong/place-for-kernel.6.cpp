// Wrong (R2): prefetches but gives no advice
//
// "The prefetch puts the pages there; advice is optional": it is, for speed, but the task asks for the
// preference too, so that pages the host touches in between go back to dev on the next fault rather
// than wherever the driver guesses. PREFERRED_LOCATION reads CU_DEVICE_INVALID: `preferred(m) ==
// lab.dev` fails.
#include "exercises.hpp"

namespace ex23 {

bool placeForKernel(CUdeviceptr ptr, size_t bytes, CUdevice dev, CUstream stream) {
  int concurrent = 0;
  CU_CHECK(cuDeviceGetAttribute(&concurrent, CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, dev));
  if (!concurrent) return false;
  CU_CHECK(wb::memPrefetchAsync(ptr, bytes, wb::deviceLocation(dev), 0, stream));
  return true;
}

}  // namespace ex23
