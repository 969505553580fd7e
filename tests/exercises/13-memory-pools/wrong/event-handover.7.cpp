// Wrong (R2): records the event in the consumer instead of the producer
//
// One stream name for the other: the consumer then waits for its own past, which orders nothing
// after the producer's free, and its later work runs while the producer is held: `!consumerRanEarly`
// fails.
#include "exercises.hpp"

namespace ex13 {

CUdeviceptr handOver(CUmemoryPool pool, CUdeviceptr used, size_t bytes, CUstream producer, CUstream consumer) {
  CU_CHECK(cuMemFreeAsync(used, producer));
  CUevent freed = nullptr;
  CU_CHECK(cuEventCreate(&freed, CU_EVENT_DISABLE_TIMING));
  CUdeviceptr block = 0;
  CUresult rc = cuEventRecord(freed, consumer);
  if (rc == CUDA_SUCCESS) rc = cuStreamWaitEvent(consumer, freed, 0);
  if (rc == CUDA_SUCCESS) rc = cuMemAllocFromPoolAsync(&block, bytes, pool, consumer);
  cuEventDestroy(freed);
  CU_CHECK(rc);
  return block;
}

}  // namespace ex13
