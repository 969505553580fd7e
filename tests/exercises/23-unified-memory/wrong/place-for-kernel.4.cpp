// Wrong (R2 R3): passes the number of 4-byte words where the calls take bytes
//
// "The buffer holds bytes / 4 floats": cuMemAdvise and cuMemPrefetchAsync count bytes, so only the
// first quarter is advised and moved, and the kernel faults the rest over. The whole range's
// PREFERRED_LOCATION and LAST_PREFETCH_LOCATION read CU_DEVICE_INVALID: `preferred(m) == lab.dev` fails.
#include "exercises.hpp"

namespace ex23 {

bool placeForKernel(CUdeviceptr ptr, size_t bytes, CUdevice dev, CUstream stream) {
  int concurrent = 0;
  CU_CHECK(cuDeviceGetAttribute(&concurrent, CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, dev));
  if (!concurrent) return false;
  const size_t words = bytes / sizeof(float);
  const CUmemLocation where = wb::deviceLocation(dev);
  CU_CHECK(wb::memAdvise(ptr, words, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, where));
  CU_CHECK(wb::memPrefetchAsync(ptr, words, where, 0, stream));
  return true;
}

}  // namespace ex23
