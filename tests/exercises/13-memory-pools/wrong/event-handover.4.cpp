// Wrong (R3): allocates the consumer's block first and makes the consumer wait afterwards, "before its work"
//
// The consumer's later work is ordered after the producer's, but its allocation came before the
// wait, so it is not ordered after the free and the pool may not hand it the freed block. The check
// sees the order: when the allocation fails, the consumer has not waited yet, and `waits >= 1`
// fails.
#include "exercises.hpp"

namespace ex13 {

CUdeviceptr handOver(CUmemoryPool pool, CUdeviceptr used, size_t bytes, CUstream producer, CUstream consumer) {
  CU_CHECK(cuMemFreeAsync(used, producer));
  CUevent freed = nullptr;
  CU_CHECK(cuEventCreate(&freed, CU_EVENT_DISABLE_TIMING));
  CUdeviceptr block = 0;
  CUresult rc = cuEventRecord(freed, producer);
  if (rc == CUDA_SUCCESS) rc = cuMemAllocFromPoolAsync(&block, bytes, pool, consumer);  // before the wait
  if (rc == CUDA_SUCCESS) rc = cuStreamWaitEvent(consumer, freed, 0);
  if (rc != CUDA_SUCCESS && block) cuMemFreeAsync(block, consumer);
  cuEventDestroy(freed);
  CU_CHECK(rc);
  return block;
}

}  // namespace ex13
