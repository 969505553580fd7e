// Wrong (R2 R3): converts the old int attributes as if every value were a device ordinal
//
// Code ported from before CUDA 12.2 reads PREFERRED_LOCATION and LAST_PREFETCH_LOCATION and makes a
// device location of each, handling CU_DEVICE_INVALID but forgetting that CU_DEVICE_CPU (-1) is the
// host. A range on the host comes back as "device -1": `is(got.lastPrefetch, host)` fails for "read
// mostly, ... prefetched to the host".
#include "exercises.hpp"

namespace ex23 {

namespace {
CUmemLocation fromOrdinal(int ordinal) {
  if (ordinal == CU_DEVICE_INVALID) return CUmemLocation{};
  return wb::deviceLocation(ordinal);
}
}  // namespace

Placement placementOf(CUdeviceptr ptr, size_t bytes) {
  Placement p;
  int readMostly = 0, preferred = 0, last = 0;
  void* data[] = {&readMostly, &preferred, &last};
  size_t sizes[] = {4, 4, 4};
  CUmem_range_attribute what[] = {CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION,
                                  CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION};
  CU_CHECK(cuMemRangeGetAttributes(data, sizes, what, 3, ptr, bytes));
  p.preferred = fromOrdinal(preferred);
  p.lastPrefetch = fromOrdinal(last);
  p.readMostly = readMostly != 0;
  return p;
}

}  // namespace ex23
