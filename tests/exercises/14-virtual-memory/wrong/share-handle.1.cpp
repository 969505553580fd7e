// Wrong (R2): imports and maps, but grants no access, "since the exporter already granted access"
//
// Access belongs to a mapping, and this process's mapping starts with none: in the child
// cuMemGetAccess does not say read-write (the check then touches nothing), the child's checks fail,
// and the parent's `end.code == 0` and the mark it looks for fail with them.
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
  if (rc != CUDA_SUCCESS) {
    if (reserved) cuMemAddressFree(ptr, size);
    CU_CHECK(rc);
  }
  return ptr;
}

}  // namespace ex14
