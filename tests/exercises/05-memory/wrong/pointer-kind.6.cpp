// Wrong (R1): calls device memory of another context than the current one pageable
//
// "Memory my context did not allocate is not device memory I can use." The task asks what the
// memory is, whichever context made it: with unified addressing the driver answers for any
// context's memory, and device memory is device memory. In "R1: device memory is Device ...",
// `ofOtherContext == ex05::MemoryKind::Device` fails.
#include "exercises.hpp"

namespace ex05 {

MemoryKind memoryKind(const void* p) {
  const CUdeviceptr address = reinterpret_cast<CUdeviceptr>(p);
  unsigned type = 0;
  const CUresult rc = cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, address);
  if (rc == CUDA_ERROR_INVALID_VALUE) return MemoryKind::PageableHost;
  CU_CHECK(rc);
  if (type == CU_MEMORYTYPE_HOST) return MemoryKind::PinnedHost;
  CUcontext owner = nullptr, current = nullptr;
  CU_CHECK(cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_CONTEXT, address));
  CU_CHECK(cuCtxGetCurrent(&current));
  return owner == current ? MemoryKind::Device : MemoryKind::PageableHost;
}

}  // namespace ex05
