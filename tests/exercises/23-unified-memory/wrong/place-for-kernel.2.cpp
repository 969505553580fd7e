// Wrong (R5): waits for the stream after the prefetch, to be sure the pages are there
//
// "A kernel must not start on pages that are still moving": stream order already guarantees that, and
// the library's caller wanted the host free. With the gate holding the stream this waits out the gate's
// deadline: `seen == wb::Gate::Waiting` and `waited == 0` fail.
#include "exercises.hpp"

namespace ex23 {

bool placeForKernel(CUdeviceptr ptr, size_t bytes, CUdevice dev, CUstream stream) {
  int concurrent = 0;
  CU_CHECK(cuDeviceGetAttribute(&concurrent, CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, dev));
  if (!concurrent) return false;
  const CUmemLocation where = wb::deviceLocation(dev);
  CU_CHECK(wb::memAdvise(ptr, bytes, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, where));
  CU_CHECK(wb::memPrefetchAsync(ptr, bytes, where, 0, stream));
  CU_CHECK(cuStreamSynchronize(stream));
  return true;
}

}  // namespace ex23
