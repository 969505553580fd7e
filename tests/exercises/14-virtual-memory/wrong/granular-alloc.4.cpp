// Wrong (R5): checks cuMemCreate with CU_CHECK, so a request the device cannot hold leaks its reservation
//
// Each call checked as it is made, the reservation first: when cuMemCreate fails (twice the
// device's memory, or the check's injected failure), CU_CHECK throws past cuMemAddressFree, and
// `left.empty()` fails ("1 address reservation more").
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
  CU_CHECK(cuMemCreate(&handle, a.size, &prop, 0));  // throws past the cuMemAddressFree below
  CUresult rc = cuMemMap(a.ptr, a.size, 0, handle, 0);
  cuMemRelease(handle);  // mapped: the mapping keeps the memory; not mapped: this frees it
  if (rc == CUDA_SUCCESS) {
    CUmemAccessDesc access{};
    access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    access.location.id = dev;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    rc = cuMemSetAccess(a.ptr, a.size, &access, 1);
    if (rc != CUDA_SUCCESS) cuMemUnmap(a.ptr, a.size);
  }
  if (rc != CUDA_SUCCESS) {
    cuMemAddressFree(a.ptr, a.size);  // nothing leaks out of a failed allocation
    CU_CHECK(rc);
  }
  return a;
}

}  // namespace ex14
