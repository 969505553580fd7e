// Wrong (R1): passes the descriptor's address as the OS handle, as for the other out-parameters
//
// For CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, cuMemImportFromShareableHandle takes the descriptor
// itself, cast to a pointer: given its address, it reads a number that is no open descriptor and
// the import fails. The child's mapShared throws before any call the check fails on purpose:
// `f.fired` fails, and the child's exit code with it.
#include "exercises.hpp"

namespace ex14 {

CUdeviceptr mapShared(int fd, size_t size, CUdevice dev) {
  CUmemGenericAllocationHandle handle = 0;
  CU_CHECK(cuMemImportFromShareableHandle(&handle, &fd,
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
    CU_CHECK(rc);
  }
  return ptr;
}

}  // namespace ex14
