// Wrong (R3): takes the consumer's block with cuMemAllocAsync, from the device's current pool
//
// "cuMemAllocAsync in the consumer, after the wait": the ordering is right, but the block comes from
// the default pool, not from pool, so it can never be the block the producer freed:
// `poolOf(handed.p) == pool.get()` fails.
#include "exercises.hpp"

namespace ex13 {

CUdeviceptr handOver(CUmemoryPool pool, CUdeviceptr used, size_t bytes, CUstream producer, CUstream consumer) {
  (void)pool;
  CU_CHECK(cuMemFreeAsync(used, producer));
  CUevent freed = nullptr;
  CU_CHECK(cuEventCreate(&freed, CU_EVENT_DISABLE_TIMING));
  CUdeviceptr block = 0;
  CUresult rc = cuEventRecord(freed, producer);
  if (rc == CUDA_SUCCESS) rc = cuStreamWaitEvent(consumer, freed, 0);
  if (rc == CUDA_SUCCESS) rc = cuMemAllocAsync(&block, bytes, consumer);
  cuEventDestroy(freed);
  CU_CHECK(rc);
  return block;
}

}  // namespace ex13
