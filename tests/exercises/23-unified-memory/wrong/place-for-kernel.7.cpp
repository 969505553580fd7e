// Wrong (R7): ignores what the prefetch returns
//
// "A prefetch is only a hint, so its error does not matter": an error there is a wrong pointer, size or
// stream, and it is also the sticky error of a failed kernel that the caller must hear about. With the
// prefetch made to fail, placeForKernel returns normally: `f.threw` fails.
#include "exercises.hpp"

namespace ex23 {

bool placeForKernel(CUdeviceptr ptr, size_t bytes, CUdevice dev, CUstream stream) {
  int concurrent = 0;
  CU_CHECK(cuDeviceGetAttribute(&concurrent, CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, dev));
  if (!concurrent) return false;
  const CUmemLocation where = wb::deviceLocation(dev);
  CU_CHECK(wb::memAdvise(ptr, bytes, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, where));
  (void)wb::memPrefetchAsync(ptr, bytes, where, 0, stream);
  return true;
}

}  // namespace ex23
