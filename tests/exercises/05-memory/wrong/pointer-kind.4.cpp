// Wrong (R4): remembers each address's answer, so memory registered or unregistered later keeps its old kind
//
// "Pointer attributes are slow to ask; a copy routine sees the same buffers again and again", so
// a cache keyed by address. But what an address is can change: a range registered with
// cuMemHostRegister becomes pinned, and pageable again when unregistered. In "malloc'd and stack
// memory ...", the address asked before registering is still called pageable while registered:
// `registered == ex05::MemoryKind::PinnedHost` fails.
#include "exercises.hpp"

#include <map>

namespace ex05 {

MemoryKind memoryKind(const void* p) {
  static std::map<const void*, MemoryKind> seen;
  if (const auto it = seen.find(p); it != seen.end()) return it->second;
  unsigned type = 0;
  const CUresult rc = cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, reinterpret_cast<CUdeviceptr>(p));
  if (rc == CUDA_ERROR_INVALID_VALUE) return seen[p] = MemoryKind::PageableHost;
  CU_CHECK(rc);
  return seen[p] = type == CU_MEMORYTYPE_HOST ? MemoryKind::PinnedHost : MemoryKind::Device;
}

}  // namespace ex05
