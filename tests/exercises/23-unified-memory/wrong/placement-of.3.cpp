// Wrong (R2): reads the preferred location's attributes into lastPrefetch and the other way round
//
// Two lists of four attributes kept in step by hand, one pair swapped. For the range that prefers
// device 0 and was prefetched to the host the two come back exchanged: `is(got.preferred, dev0)` fails.
#include "exercises.hpp"

namespace ex23 {

Placement placementOf(CUdeviceptr ptr, size_t bytes) {
  Placement p;
  int readMostly = 0;
  void* data[] = {&readMostly, &p.lastPrefetch.type, &p.lastPrefetch.id, &p.preferred.type, &p.preferred.id};
  size_t sizes[] = {4, sizeof(CUmemLocationType), 4, sizeof(CUmemLocationType), 4};
  CUmem_range_attribute what[] = {CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE,
                                  CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID,
                                  CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE,
                                  CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID};
  CU_CHECK(cuMemRangeGetAttributes(data, sizes, what, 5, ptr, bytes));
  p.readMostly = readMostly != 0;
  return p;
}

}  // namespace ex23
