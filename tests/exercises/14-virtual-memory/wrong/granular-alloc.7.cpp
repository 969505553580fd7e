// Wrong (R6): makes dev's primary context current for the calls, and a failed call throws past the pop
//
// "The virtual memory calls should run in a context of dev": allocate pushes dev's primary context
// and pops and releases it before it returns. Every failure is undone, but CU_CHECK throws before
// the pop, and the caller's thread is left with dev's primary context on top of its own. In "R5 R6:
// when the device has not the memory ...", `wbx::contextStack() == stackBefore` fails.
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
  CUcontext primary = nullptr;
  CU_CHECK(cuDevicePrimaryCtxRetain(&primary, dev));
  CU_CHECK(cuCtxPushCurrent(primary));  // "the memory calls run in dev's context"
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
    cuDevicePrimaryCtxRelease(dev);
    CU_CHECK(rc);  // throws with dev's primary context still pushed
  }
  CU_CHECK(cuCtxPopCurrent(&primary));
  CU_CHECK(cuDevicePrimaryCtxRelease(dev));
  return a;
}

}  // namespace ex14
