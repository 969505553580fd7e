// Wrong (R2): grants access to device 0, "the GPU", instead of dev
//
// Given memory on device 1 and dev = 1, the worker's mapping is granted to device 0 only (the two
// devices can reach each other's memory, so the grant succeeds): in the child on device 1
// `rw` (cuMemGetAccess read-write for dev) fails, and the parent's `end.code == 0` with it.
// Two devices: with one device, dev is device 0.
#include "exercises.hpp"

#include <cstdint>

namespace ex14 {

CUdeviceptr mapShared(int fd, size_t size, CUdevice dev) {
  (void)dev;
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
    access.location.id = 0;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    rc = cuMemSetAccess(ptr, size, &access, 1);
    if (rc != CUDA_SUCCESS) cuMemUnmap(ptr, size);
  }
  if (rc != CUDA_SUCCESS) {
    if (reserved) cuMemAddressFree(ptr, size);
    CU_CHECK(rc);
  }
  return ptr;
}

}  // namespace ex14
