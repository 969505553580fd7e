// Wrong (R5): checks each call with CU_CHECK after the import, so a failed map leaks the import and the addresses
//
// The natural way to write it, each call checked as it is made: when cuMemMap or cuMemSetAccess
// fails, CU_CHECK throws past the release and cuMemAddressFree. In the child's failure cases
// `left.empty()` fails ("1 allocation handle more, 1 address reservation more").
#include "exercises.hpp"

#include <cstdint>

namespace ex14 {

CUdeviceptr mapShared(int fd, size_t size, CUdevice dev) {
  CUmemGenericAllocationHandle handle = 0;
  CU_CHECK(cuMemImportFromShareableHandle(&handle, reinterpret_cast<void*>(static_cast<uintptr_t>(fd)),
                                          CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
  CUmemAllocationProp prop{};
  size_t granule = 0;
  CU_CHECK(cuMemGetAllocationPropertiesFromHandle(&prop, handle));
  CU_CHECK(cuMemGetAllocationGranularity(&granule, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  CUdeviceptr ptr = 0;
  CU_CHECK(cuMemAddressReserve(&ptr, size, granule, 0, 0));
  CU_CHECK(cuMemMap(ptr, size, 0, handle, 0));
  CU_CHECK(cuMemRelease(handle));
  CUmemAccessDesc access{};
  access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  access.location.id = dev;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  CU_CHECK(cuMemSetAccess(ptr, size, &access, 1));
  return ptr;
}

}  // namespace ex14
