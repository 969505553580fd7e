// Wrong (R4): asks about the first page only, not the whole range
//
// "The attributes are the same for every page of an allocation": they are per page, and advice or a
// prefetch may cover part of a range. For the range whose halves differ the first page answers device 0
// where the whole range answers INVALID: `is(got.preferred, want)` fails for "halves ...".
#include "exercises.hpp"

namespace ex23 {

Placement placementOf(CUdeviceptr ptr, size_t bytes) {
  (void)bytes;
  const size_t page = 4096;
  Placement p;
  int readMostly = 0;
  void* data[] = {&readMostly, &p.preferred.type, &p.preferred.id, &p.lastPrefetch.type, &p.lastPrefetch.id};
  size_t sizes[] = {4, sizeof(CUmemLocationType), 4, sizeof(CUmemLocationType), 4};
  CUmem_range_attribute what[] = {CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE,
                                  CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID,
                                  CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE,
                                  CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID};
  CU_CHECK(cuMemRangeGetAttributes(data, sizes, what, 5, ptr, page));
  p.readMostly = readMostly != 0;
  return p;
}

}  // namespace ex23
