// Reference solution of lesson 05's exercise pointer-kind (lessons/05-memory/exercises.cpp).
#include "exercises.hpp"

namespace ex05 {

// With unified addressing every allocation the driver made or registered has a place in one address
// space, so the address alone says what it is, whichever context made it. Pinned host memory is
// known to the driver too: what tells it from device memory is its type, not that the driver knows
// it. Memory the driver never saw is CUDA_ERROR_INVALID_VALUE: an answer, not a failure.
MemoryKind memoryKind(const void* p) {
  unsigned type = 0;
  const CUresult rc = cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, reinterpret_cast<CUdeviceptr>(p));
  if (rc == CUDA_ERROR_INVALID_VALUE) return MemoryKind::PageableHost;
  CU_CHECK(rc);
  return type == CU_MEMORYTYPE_HOST ? MemoryKind::PinnedHost : MemoryKind::Device;
}

}  // namespace ex05
