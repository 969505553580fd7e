// Wrong (R4): also makes the new pool the device's current pool, "so that the service's cuMemAllocAsync uses it"
//
// The threshold is right, but the current pool is the whole process's: every library's
// cuMemAllocAsync, the runtime's cudaMallocAsync included, now takes from the service's pool, and
// when the service destroys it the others silently fall back. `currentPool(ctx.dev) ==
// currentBefore` fails (and `setPoolCalls() == setBefore`).
#include "exercises.hpp"

namespace ex13 {

CUmemoryPool createSteadyPool(CUdevice dev, size_t workingSetBytes) {
  CUmemPoolProps props{};
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.handleTypes = CU_MEM_HANDLE_TYPE_NONE;
  props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  props.location.id = dev;
  CUmemoryPool pool = nullptr;
  CU_CHECK(cuMemPoolCreate(&pool, &props));
  cuuint64_t keep = workingSetBytes;
  CUresult rc = cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep);
  if (rc == CUDA_SUCCESS) rc = cuDeviceSetMemPool(dev, pool);
  if (rc != CUDA_SUCCESS) {
    cuMemPoolDestroy(pool);
    CU_CHECK(rc);
  }
  return pool;
}

}  // namespace ex13
