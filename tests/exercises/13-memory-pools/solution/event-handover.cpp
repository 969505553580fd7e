// Reference solution of lesson 13's exercise event-handover (lessons/13-memory-pools/exercises.cpp).
#include "exercises.hpp"

namespace ex13 {

// The event, recorded after the free, puts the consumer's allocation, and all its later work, after
// that free in the stream order. The pool follows that dependency (REUSE_FOLLOW_EVENT_DEPENDENCIES,
// on by default) and may hand the consumer the very block; nothing blocks the host. The event goes
// once the allocation has seen the wait (the device releases it when it is done with it), and on
// every path.
CUdeviceptr handOver(CUmemoryPool pool, CUdeviceptr used, size_t bytes, CUstream producer, CUstream consumer) {
  CU_CHECK(cuMemFreeAsync(used, producer));
  CUevent freed = nullptr;
  CU_CHECK(cuEventCreate(&freed, CU_EVENT_DISABLE_TIMING));
  CUdeviceptr block = 0;
  CUresult rc = cuEventRecord(freed, producer);                          // after the free
  if (rc == CUDA_SUCCESS) rc = cuStreamWaitEvent(consumer, freed, 0);
  if (rc == CUDA_SUCCESS) rc = cuMemAllocFromPoolAsync(&block, bytes, pool, consumer);  // after the wait
  cuEventDestroy(freed);
  CU_CHECK(rc);
  return block;
}

}  // namespace ex13
