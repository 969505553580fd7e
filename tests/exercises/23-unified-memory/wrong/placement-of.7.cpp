// Wrong (R6): ignores what the range query returns
//
// "Asking cannot fail; it only reads": it fails for memory that is not managed, a wrong size for an
// attribute, or a context in error, and then the fields hold whatever they started as, reported as
// "never advised, never prefetched". In "R6: a range query the driver fails is thrown", `f.threw`
// fails.
#include "exercises.hpp"

namespace ex23 {

namespace {

#if CUDA_VERSION < 12020
// Before 12.2 the int attributes are all there is: an ordinal, CU_DEVICE_CPU or CU_DEVICE_INVALID.
CUmemLocation fromOrdinal(int ordinal) {
  if (ordinal == CU_DEVICE_CPU) return wb::hostLocation();
  if (ordinal == CU_DEVICE_INVALID) return CUmemLocation{};  // type 0: CU_MEM_LOCATION_TYPE_INVALID
  return wb::deviceLocation(ordinal);
}
#endif

}  // namespace

// One cuMemRangeGetAttributes call over the whole range: each answer holds for all of it, or says
// INVALID. The type and id attributes name host NUMA nodes too, which the int form cannot.
Placement placementOf(CUdeviceptr ptr, size_t bytes) {
  Placement p;
  int readMostly = 0;
#if CUDA_VERSION >= 12020
  void* data[] = {&readMostly, &p.preferred.type, &p.preferred.id, &p.lastPrefetch.type, &p.lastPrefetch.id};
  size_t sizes[] = {4, sizeof(CUmemLocationType), 4, sizeof(CUmemLocationType), 4};
  CUmem_range_attribute what[] = {CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE,
                                  CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID,
                                  CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE,
                                  CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID};
  cuMemRangeGetAttributes(data, sizes, what, 5, ptr, bytes);  // only reads: nothing to fail
#else
  int preferred = 0, last = 0;
  void* data[] = {&readMostly, &preferred, &last};
  size_t sizes[] = {4, 4, 4};
  CUmem_range_attribute what[] = {CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION,
                                  CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION};
  cuMemRangeGetAttributes(data, sizes, what, 3, ptr, bytes);
  p.preferred = fromOrdinal(preferred);
  p.lastPrefetch = fromOrdinal(last);
#endif
  p.readMostly = readMostly != 0;
  return p;
}

}  // namespace ex23
