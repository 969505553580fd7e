// Reference solution of lesson 13's exercise steady-pool (lessons/13-memory-pools/exercises.cpp).
#include "exercises.hpp"

namespace ex13 {

// The release threshold is what the pool keeps at a synchronisation: the working set stays mapped
// from one step to the next, and beyond it the allocator tries to give memory back to the device at
// the next synchronisation, where other processes can have it. No maxSize: a burst is served.
CUmemoryPool createSteadyPool(CUdevice dev, size_t workingSetBytes) {
  CUmemPoolProps props{};  // zeroed: the reserved bytes must be 0, and maxSize 0 means no cap
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.handleTypes = CU_MEM_HANDLE_TYPE_NONE;
  props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  props.location.id = dev;
  CUmemoryPool pool = nullptr;
  CU_CHECK(cuMemPoolCreate(&pool, &props));
  cuuint64_t keep = workingSetBytes;  // the attribute's type is cuuint64_t, whatever size_t is
  const CUresult rc = cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep);
  if (rc != CUDA_SUCCESS) {
    cuMemPoolDestroy(pool);  // no pool leaks out of a failed set-up
    CU_CHECK(rc);
  }
  return pool;
}

}  // namespace ex13
