// Reference solutions of lesson 13's exercises.
#include "exercises.hpp"

namespace ex13 {

// Every call only enqueues into the request's stream: the allocation, both copies and the free run
// in that order when the stream gets there, and the scratch buffer is the pool's again from the
// free on. The stream's own order is all the synchronisation the buffer needs.
void serveRequest(CUmemoryPool pool, CUstream stream, CUdeviceptr input, CUdeviceptr output, size_t bytes) {
  CUdeviceptr scratch = 0;
  CU_CHECK(cuMemAllocFromPoolAsync(&scratch, bytes, pool, stream));  // this pool, not the current one
  CU_CHECK(cuMemcpyDtoDAsync(scratch, input, bytes, stream));
  CU_CHECK(cuMemcpyDtoDAsync(output, scratch, bytes, stream));
  CU_CHECK(cuMemFreeAsync(scratch, stream));
}

// The release threshold is what the pool keeps at a synchronisation: the working set stays mapped
// from one step to the next, and a burst beyond it goes back to the device at the next
// synchronisation, where other processes can have it.
CUmemoryPool createSteadyPool(CUdevice dev, size_t workingSetBytes) {
  CUmemPoolProps props{};  // zeroed: the reserved bytes must be 0
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

// The event puts the consumer's allocation, and all its later work, after the producer's free in
// the stream order. The pool follows that dependency (REUSE_FOLLOW_EVENT_DEPENDENCIES, on by
// default) and may hand the consumer the very block; nothing blocks the host. The event goes once
// the allocation has seen the wait.
CUdeviceptr handOver(CUmemoryPool pool, CUdeviceptr used, size_t bytes, CUstream producer, CUstream consumer) {
  CU_CHECK(cuMemFreeAsync(used, producer));
  CUevent freed = nullptr;
  CU_CHECK(cuEventCreate(&freed, CU_EVENT_DISABLE_TIMING));
  CUdeviceptr block = 0;
  CUresult rc = cuEventRecord(freed, producer);
  if (rc == CUDA_SUCCESS) rc = cuStreamWaitEvent(consumer, freed, 0);
  if (rc == CUDA_SUCCESS) rc = cuMemAllocFromPoolAsync(&block, bytes, pool, consumer);
  cuEventDestroy(freed);  // released once the device is past it; the wait is already enqueued
  CU_CHECK(rc);
  return block;
}

}  // namespace ex13
