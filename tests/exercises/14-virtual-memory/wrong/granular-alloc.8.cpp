// Wrong (R2): creates the memory on the current context's device instead of dev
//
// "The memory is for the device I am working on": cuCtxGetDevice answers for the context that is
// current, not for dev. Asked for device 1 while device 0's context is current, it creates device
// 0's memory and grants device 1 access to it (the devices reach each other's memory): in "R2 R3:
// an allocation for device 1 ...", `homeOf(a.ptr) == 1` fails.
// Two devices: with one device, the current context's device is always dev.
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

// Every size, address and offset in the virtual memory calls is a multiple of the minimum
// granularity: round the request up to it, and no further (a size that is a multiple already gets
// nothing added). The handle is released once mapped, so the mapping owns the memory and the
// caller's cuMemUnmap frees it. Each failure undoes what came before it.
Allocation allocate(CUdevice dev, size_t bytes) {
  CUdevice here = 0;
  CU_CHECK(cuCtxGetDevice(&here));  // "the device I am working on"
  const CUmemAllocationProp prop = onDevice(here);
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
