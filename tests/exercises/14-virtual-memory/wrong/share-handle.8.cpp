// Wrong (R6): makes dev's primary context current for the calls, and a failed call throws past the pop
//
// "The worker's calls should run in a context of dev": mapShared pushes dev's primary context and
// pops and releases it before it returns. Every failure is undone, but CU_CHECK throws before the
// pop, and the caller's thread is left with dev's primary context on top of its own. In the child's
// failure cases `wbx::contextStack() == stackBefore` fails, the child fails, and with it the
// parent's `end.code == 0`.
#include "exercises.hpp"

#include <cstdint>

namespace ex14 {

// An imported handle is a handle like one from cuMemCreate, but the mapping here is new: the
// exporter's cuMemSetAccess covered only its own mapping, so this process grants access itself. The
// granularity comes from the allocation's own properties. The import is released once mapped (each
// import is paired with a cuMemRelease), so the mapping holds the memory; fd stays the caller's.
CUdeviceptr mapShared(int fd, size_t size, CUdevice dev) {
  CUcontext primary = nullptr;
  CU_CHECK(cuDevicePrimaryCtxRetain(&primary, dev));
  CU_CHECK(cuCtxPushCurrent(primary));  // "the worker's calls run in dev's context"
  CUmemGenericAllocationHandle handle = 0;
  CU_CHECK(cuMemImportFromShareableHandle(&handle, reinterpret_cast<void*>(static_cast<uintptr_t>(fd)),
                                          CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
  CUmemAllocationProp prop{};
  size_t granule = 0;
  CUresult rc = cuMemGetAllocationPropertiesFromHandle(&prop, handle);
  if (rc == CUDA_SUCCESS) rc = cuMemGetAllocationGranularity(&granule, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
  CUdeviceptr ptr = 0;
  if (rc == CUDA_SUCCESS) rc = cuMemAddressReserve(&ptr, size, granule, 0, 0);
  const bool reserved = rc == CUDA_SUCCESS;
  if (rc == CUDA_SUCCESS) rc = cuMemMap(ptr, size, 0, handle, 0);
  cuMemRelease(handle);  // mapped: the mapping keeps the memory; not mapped: the import is given back
  if (rc == CUDA_SUCCESS) {
    CUmemAccessDesc access{};
    access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    access.location.id = dev;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    rc = cuMemSetAccess(ptr, size, &access, 1);
    if (rc != CUDA_SUCCESS) cuMemUnmap(ptr, size);
  }
  if (rc != CUDA_SUCCESS) {
    if (reserved) cuMemAddressFree(ptr, size);
    cuDevicePrimaryCtxRelease(dev);
    CU_CHECK(rc);  // throws with dev's primary context still pushed
  }
  CU_CHECK(cuCtxPopCurrent(&primary));
  CU_CHECK(cuDevicePrimaryCtxRelease(dev));
  return ptr;
}

}  // namespace ex14
