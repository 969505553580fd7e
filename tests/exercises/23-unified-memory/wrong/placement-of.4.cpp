// Wrong (R4): passes the range's end address where the call takes its length
//
// "Start and end, like an iterator pair": cuMemRangeGetAttributes takes devPtr and a count of bytes.
// ptr + bytes as the count names a range far past the allocation, which is not managed memory: the call
// fails, placementOf throws, and the check fails on the first range.
#include "exercises.hpp"

namespace ex23 {

Placement placementOf(CUdeviceptr ptr, size_t bytes) {
  Placement p;
  int readMostly = 0;
  void* data[] = {&readMostly, &p.preferred.type, &p.preferred.id, &p.lastPrefetch.type, &p.lastPrefetch.id};
  size_t sizes[] = {4, sizeof(CUmemLocationType), 4, sizeof(CUmemLocationType), 4};
  CUmem_range_attribute what[] = {CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE,
                                  CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID,
                                  CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE,
                                  CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID};
  const CUdeviceptr end = ptr + bytes;
  CU_CHECK(cuMemRangeGetAttributes(data, sizes, what, 5, ptr, static_cast<size_t>(end)));
  p.readMostly = readMostly != 0;
  return p;
}

}  // namespace ex23
