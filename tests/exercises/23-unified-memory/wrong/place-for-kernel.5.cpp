// Wrong (R1): never asks whether dev has concurrent managed access
//
// "Every GPU we ship on is a Hopper": on Windows, WSL, Tegra and some virtual machines the attribute is 0
// and the reference allows neither a device preference nor a prefetch to it. With the attribute made 0,
// the check sees advice and a prefetch: `advises() == advised` fails.
#include "exercises.hpp"

namespace ex23 {

bool placeForKernel(CUdeviceptr ptr, size_t bytes, CUdevice dev, CUstream stream) {
  const CUmemLocation where = wb::deviceLocation(dev);
  CU_CHECK(wb::memAdvise(ptr, bytes, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, where));
  CU_CHECK(wb::memPrefetchAsync(ptr, bytes, where, 0, stream));
  return true;
}

}  // namespace ex23
