// Wrong (R3): maps the memory but grants no access, "cuMemMap makes it device memory like any other"
//
// The reference says cuMemMap "does not make the address accessible": every mapping starts with
// none, and a kernel or copy that touches it does not succeed. `rw` (cuMemGetAccess read-write)
// fails for every request.
#include "exercises.hpp"

namespace ex14 {

namespace {

// In size_t throughout: a size past 4 GiB keeps its high bits.
size_t roundUp(size_t bytes, size_t granule) { return (bytes + granule - 1) / granule * granule; }

CUmemAllocationProp onDevice(CUdevice dev) {
  CUmemAllocationProp prop{};  // zeroed: every field not set here must be 0
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = dev;
  return prop;
}

}  // namespace

Allocation allocate(CUdevice dev, size_t bytes) {
  const CUmemAllocationProp prop = onDevice(dev);
  size_t granule = 0;
  CU_CHECK(cuMemGetAllocationGranularity(&granule, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  Allocation a;
  a.size = roundUp(bytes, granule);
  CU_CHECK(cuMemAddressReserve(&a.ptr, a.size, granule, 0, 0));
  CUmemGenericAllocationHandle handle = 0;
  CUresult rc = cuMemCreate(&handle, a.size, &prop, 0);
  if (rc == CUDA_SUCCESS) {
    rc = cuMemMap(a.ptr, a.size, 0, handle, 0);
    cuMemRelease(handle);  // mapped: the mapping keeps the memory; not mapped: this frees it
  }
  if (rc != CUDA_SUCCESS) {
    cuMemAddressFree(a.ptr, a.size);  // nothing leaks out of a failed allocation
    CU_CHECK(rc);
  }
  return a;
}

}  // namespace ex14
