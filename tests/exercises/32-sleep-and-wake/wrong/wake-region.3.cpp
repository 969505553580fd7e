// Wrong (R2): maps the memory back but never restores it: the weights are whatever the new memory held
#include "exercises.hpp"

namespace ex32 {

// create_and_map, as vLLM's csrc/cumem_allocator.cpp names it, at the address kept, then the copy
// back. A failure anywhere unwinds to asleep: the caller may try again later.
void wakeRegion(Region& region, const void* restoreFrom) {
  if (region.handle) return;
  (void)restoreFrom;  // "the engine reloads its weights itself"
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = region.device;
  CUmemGenericAllocationHandle handle = 0;
  CU_CHECK(cuMemCreate(&handle, region.size, &prop, 0));
  CUresult rc = cuMemMap(region.base, region.size, 0, handle, 0);
  if (rc == CUDA_SUCCESS) {
    CUmemAccessDesc access{};
    access.location = prop.location;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    rc = cuMemSetAccess(region.base, region.size, &access, 1);
    if (rc != CUDA_SUCCESS) cuMemUnmap(region.base, region.size);
  }
  if (rc != CUDA_SUCCESS) {
    cuMemRelease(handle);
    CU_CHECK(rc);
  }
  region.handle = handle;
}

}  // namespace ex32
