// Wrong (R5): checks the reservation with CU_CHECK, so a failed reservation leaks the import
//
// The clean-up covers the map and the access, the calls that "can fail"; the reservation is
// checked as it is made. When cuMemAddressReserve fails (no addresses left, or the check's injected
// failure), CU_CHECK throws past cuMemRelease, and the imported handle keeps the exporter's memory
// alive in this process. In the child's failure cases `left.empty()` fails ("1 allocation handle
// more"), the child fails, and with it the parent's `end.code == 0`.
#include "exercises.hpp"

#include <cstdint>

namespace ex14 {

// An imported handle is a handle like one from cuMemCreate, but the mapping here is new: the
// exporter's cuMemSetAccess covered only its own mapping, so this process grants access itself. The
// granularity comes from the allocation's own properties. The import is released once mapped (each
// import is paired with a cuMemRelease), so the mapping holds the memory; fd stays the caller's.
CUdeviceptr mapShared(int fd, size_t size, CUdevice dev) {
  CUmemGenericAllocationHandle handle = 0;
  CU_CHECK(cuMemImportFromShareableHandle(&handle, reinterpret_cast<void*>(static_cast<uintptr_t>(fd)),
                                          CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
  CUmemAllocationProp prop{};
  size_t granule = 0;
  CUresult rc = cuMemGetAllocationPropertiesFromHandle(&prop, handle);
  if (rc == CUDA_SUCCESS) rc = cuMemGetAllocationGranularity(&granule, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
  CUdeviceptr ptr = 0;
  CU_CHECK(rc);
  CU_CHECK(cuMemAddressReserve(&ptr, size, granule, 0, 0));  // throws past the release below
  const bool reserved = true;
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
