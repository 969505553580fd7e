// Wrong (R3): when the mapping or the access fails, frees the reservation but forgets the handle cuMemCreate made
#include "exercises.hpp"

namespace ex32 {

namespace {

CUmemAllocationProp onDevice(CUdevice dev) {
  CUmemAllocationProp prop{};  // zeroed: every field not set here must be 0
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = dev;
  return prop;
}

}  // namespace

// Four calls, each undone in reverse when a later one fails: the reservation is the region's for
// its whole life, the handle and the mapping only while it is awake.
Region mapRegion(CUdevice dev, size_t bytes) {
  const CUmemAllocationProp prop = onDevice(dev);
  size_t granule = 0;
  CU_CHECK(cuMemGetAllocationGranularity(&granule, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  Region r;
  r.device = dev;
  r.size = (bytes + granule - 1) / granule * granule;
  CU_CHECK(cuMemAddressReserve(&r.base, r.size, granule, 0, 0));
  CUresult rc = cuMemCreate(&r.handle, r.size, &prop, 0);
  if (rc == CUDA_SUCCESS) {
    rc = cuMemMap(r.base, r.size, 0, r.handle, 0);
    if (rc == CUDA_SUCCESS) {
      CUmemAccessDesc access{};
      access.location = prop.location;
      access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
      rc = cuMemSetAccess(r.base, r.size, &access, 1);
      if (rc != CUDA_SUCCESS) cuMemUnmap(r.base, r.size);
    }
  }
  if (rc != CUDA_SUCCESS) {
    cuMemAddressFree(r.base, r.size);
    CU_CHECK(rc);
  }
  return r;
}

void freeRegion(Region& region) {
  if (region.handle) {
    CU_CHECK(cuMemUnmap(region.base, region.size));
    CU_CHECK(cuMemRelease(region.handle));
    region.handle = 0;
  }
  if (region.base) CU_CHECK(cuMemAddressFree(region.base, region.size));
  region = Region{};
}

}  // namespace ex32
