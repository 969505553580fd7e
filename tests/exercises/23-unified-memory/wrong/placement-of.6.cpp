// Wrong (R5): prefetches the range to the host before asking, "so that every page has a place"
//
// "Pages never touched have no location to report": the engineer populates the range first. A
// profiler that moves what it measures changes where the buffer lives and what it reports as last
// prefetched. In "R1 R2 R3 R4 R5: placementOf reports each range ...", `prefetches() == prefetched`
// fails ("placementOf prefetched: it only asks").
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
  CU_CHECK(wb::memPrefetchAsync(ptr, bytes, wb::hostLocation(), 0, nullptr));
  int readMostly = 0;
#if CUDA_VERSION >= 12020
  void* data[] = {&readMostly, &p.preferred.type, &p.preferred.id, &p.lastPrefetch.type, &p.lastPrefetch.id};
  size_t sizes[] = {4, sizeof(CUmemLocationType), 4, sizeof(CUmemLocationType), 4};
  CUmem_range_attribute what[] = {CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE,
                                  CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID,
                                  CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE,
                                  CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID};
  CU_CHECK(cuMemRangeGetAttributes(data, sizes, what, 5, ptr, bytes));
#else
  int preferred = 0, last = 0;
  void* data[] = {&readMostly, &preferred, &last};
  size_t sizes[] = {4, 4, 4};
  CUmem_range_attribute what[] = {CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION,
                                  CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION};
  CU_CHECK(cuMemRangeGetAttributes(data, sizes, what, 3, ptr, bytes));
  p.preferred = fromOrdinal(preferred);
  p.lastPrefetch = fromOrdinal(last);
#endif
  p.readMostly = readMostly != 0;
  return p;
}

}  // namespace ex23
