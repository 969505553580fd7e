// Wrong (R3): CU_CHECKs cuPointerGetAttribute, so memory the driver never saw throws
//
// Every driver call goes through CU_CHECK, as the lessons do. For a std::vector or a variable on
// the stack the driver answers CUDA_ERROR_INVALID_VALUE, which is the answer "pageable", and
// memoryKind throws instead of giving it. "malloc'd and stack memory ..." ends with the exception.
#include "exercises.hpp"

namespace ex05 {

MemoryKind memoryKind(const void* p) {
  unsigned type = 0;
  CU_CHECK(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, reinterpret_cast<CUdeviceptr>(p)));
  return type == CU_MEMORYTYPE_HOST ? MemoryKind::PinnedHost : MemoryKind::Device;
}

}  // namespace ex05
