// Wrong (R1): sets the threshold of the device's default pool and returns that pool
//
// "The device already has a pool: give it the threshold." The default pool is the whole process's:
// every library's cuMemAllocAsync takes from it, the caller's cuMemPoolDestroy of it fails, and the
// threshold set for this service applies to all of them. In "R1 R2 R3 R4: a new pool ...",
// `made != byDefault` fails ("the device's default pool: make a new one").
#include "exercises.hpp"

namespace ex13 {

CUmemoryPool createSteadyPool(CUdevice dev, size_t workingSetBytes) {
  CUmemoryPool pool = nullptr;
  CU_CHECK(cuDeviceGetDefaultMemPool(&pool, dev));
  cuuint64_t keep = workingSetBytes;
  CU_CHECK(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep));
  return pool;
}

}  // namespace ex13
