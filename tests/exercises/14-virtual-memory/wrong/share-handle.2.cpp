// Wrong (R4): keeps the imported handle, "the memory is the other process's: nothing of mine to release"
//
// The reference pairs every import with a cuMemRelease: the handle is a reference of this process,
// and keeps the memory alive after the worker unmaps it, until the worker exits. In the child
// `handles == 0` fails, and so does `left.empty()` after the unmap.
#include "exercises.hpp"

#include <cstdint>

namespace ex14 {

CUdeviceptr mapShared(int fd, size_t size, CUdevice dev) {
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
  if (rc != CUDA_SUCCESS) cuMemRelease(handle);
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
    CU_CHECK(rc);
  }
  return ptr;
}

}  // namespace ex14
