// Wrong (R2): "if the driver knows the pointer, it is device memory"
//
// Pinned host memory belongs to a context too, so CU_POINTER_ATTRIBUTE_CONTEXT answers for it
// and cuMemAllocHost memory is called Device: `atStart == ex05::MemoryKind::PinnedHost` fails (and
// the registered range likewise).
#include "exercises.hpp"

namespace ex05 {

MemoryKind memoryKind(const void* p) {
  CUcontext owner = nullptr;
  const CUresult rc = cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_CONTEXT, reinterpret_cast<CUdeviceptr>(p));
  return rc == CUDA_SUCCESS ? MemoryKind::Device : MemoryKind::PageableHost;
}

}  // namespace ex05
