// Wrong (R1): rounds with a mask made from a 32-bit granularity, which clears the size's bits above 4 GiB
//
// (bytes + g - 1) & ~(g - 1) is the usual bit trick, and 2 MiB fits an unsigned: but ~(g - 1) is
// then a 32-bit mask, widened with zeros, and 4 GiB and a byte comes out as 2 MiB. `a.size ==
// roundUp(bytes, g)` fails for that request.
#include "exercises.hpp"

namespace ex14 {

namespace {

size_t roundUp(size_t bytes, unsigned granule) { return (bytes + granule - 1) & ~(granule - 1); }

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
  a.size = roundUp(bytes, static_cast<unsigned>(granule));
  CU_CHECK(cuMemAddressReserve(&a.ptr, a.size, granule, 0, 0));
  CUmemGenericAllocationHandle handle = 0;
  CUresult rc = cuMemCreate(&handle, a.size, &prop, 0);
  if (rc == CUDA_SUCCESS) {
    rc = cuMemMap(a.ptr, a.size, 0, handle, 0);
    cuMemRelease(handle);  // mapped: the mapping keeps the memory; not mapped: this frees it
  }
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
