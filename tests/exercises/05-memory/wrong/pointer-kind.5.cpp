// Wrong (R5): takes any error from cuPointerGetAttribute to mean pageable memory
//
// "An error means the driver does not know the pointer." Only CUDA_ERROR_INVALID_VALUE says that;
// with no current context, or after a fault, the query fails for device memory too, and the copy
// routine would then stage device memory through the host as if it were pageable. In "an error
// other than CUDA_ERROR_INVALID_VALUE ...", the injected CUDA_ERROR_INVALID_CONTEXT is answered
// with PageableHost and `outcome != "returned"` fails.
#include "exercises.hpp"

namespace ex05 {

MemoryKind memoryKind(const void* p) {
  unsigned type = 0;
  const CUresult rc = cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, reinterpret_cast<CUdeviceptr>(p));
  if (rc != CUDA_SUCCESS) return MemoryKind::PageableHost;
  return type == CU_MEMORYTYPE_HOST ? MemoryKind::PinnedHost : MemoryKind::Device;
}

}  // namespace ex05
