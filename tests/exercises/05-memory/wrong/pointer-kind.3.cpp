// Wrong (R2): "if the driver gives a device address for it, it is device memory"
//
// CU_POINTER_ATTRIBUTE_DEVICE_POINTER succeeds for every pointer a kernel can reach, and with
// unified addressing pinned host memory is mapped for the device: cuMemAllocHost memory has a
// device address (lesson 05, step 5) and is called Device. In "cuMemAllocHost and cuMemHostAlloc
// memory ...", `atStart == ex05::MemoryKind::PinnedHost` fails.
#include "exercises.hpp"

namespace ex05 {

MemoryKind memoryKind(const void* p) {
  CUdeviceptr onDevice = 0;
  const CUresult rc =
      cuPointerGetAttribute(&onDevice, CU_POINTER_ATTRIBUTE_DEVICE_POINTER, reinterpret_cast<CUdeviceptr>(p));
  if (rc == CUDA_ERROR_INVALID_VALUE) return MemoryKind::PageableHost;
  CU_CHECK(rc);
  return MemoryKind::Device;
}

}  // namespace ex05
