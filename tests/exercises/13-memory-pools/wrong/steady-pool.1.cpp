// Wrong (R2): sets the release threshold to UINT64_MAX, as the programming guide's example does
//
// The working set stays reserved, but so does every burst, for good: memory other processes on the
// GPU need. The task asks for a threshold of exactly the working set: `threshold == workingSet`
// fails.
#include "exercises.hpp"

#include <cstdint>

namespace ex13 {

CUmemoryPool createSteadyPool(CUdevice dev, size_t workingSetBytes) {
  (void)workingSetBytes;
  CUmemPoolProps props{};
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.handleTypes = CU_MEM_HANDLE_TYPE_NONE;
  props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  props.location.id = dev;
  CUmemoryPool pool = nullptr;
  CU_CHECK(cuMemPoolCreate(&pool, &props));
  cuuint64_t keep = UINT64_MAX;
  const CUresult rc = cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep);
  if (rc != CUDA_SUCCESS) {
    cuMemPoolDestroy(pool);
    CU_CHECK(rc);
  }
  return pool;
}

}  // namespace ex13
