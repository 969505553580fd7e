// Wrong (R3): also caps the pool at the working set with maxSize, "so that it never holds more"
//
// The threshold already bounds what the pool keeps; maxSize bounds what it may ever hold, so a
// burst beyond the working set is refused instead of served: `burst == CUDA_SUCCESS` fails.
#include "exercises.hpp"

namespace ex13 {

CUmemoryPool createSteadyPool(CUdevice dev, size_t workingSetBytes) {
  CUmemPoolProps props{};
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.handleTypes = CU_MEM_HANDLE_TYPE_NONE;
  props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  props.location.id = dev;
#if CUDA_VERSION >= 12060  // maxSize: in the CUDA 12.6 header, the oldest this course checks
  props.maxSize = workingSetBytes;
#endif
  CUmemoryPool pool = nullptr;
  CU_CHECK(cuMemPoolCreate(&pool, &props));
  cuuint64_t keep = workingSetBytes;
  const CUresult rc = cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep);
  if (rc != CUDA_SUCCESS) {
    cuMemPoolDestroy(pool);
    CU_CHECK(rc);
  }
  return pool;
}

}  // namespace ex13
