// Wrong (R1): records the event before the free, "the event marks the end of the producer's work on the buffer"
//
// The consumer then waits for the producer's work, so its own is safe, but its allocation is not
// ordered after the free: the pool may not give it the freed block, and the pool grows. That the
// pool reuses a block is the driver's choice, so the check sees the order instead: when the record
// fails, used has not been freed yet, and `left == "1 device allocation fewer"` fails.
#include "exercises.hpp"

namespace ex13 {

CUdeviceptr handOver(CUmemoryPool pool, CUdeviceptr used, size_t bytes, CUstream producer, CUstream consumer) {
  CUevent done = nullptr;
  CU_CHECK(cuEventCreate(&done, CU_EVENT_DISABLE_TIMING));
  CUdeviceptr block = 0;
  CUresult rc = cuEventRecord(done, producer);  // before the free
  if (rc == CUDA_SUCCESS) rc = cuMemFreeAsync(used, producer);
  if (rc == CUDA_SUCCESS) rc = cuStreamWaitEvent(consumer, done, 0);
  if (rc == CUDA_SUCCESS) rc = cuMemAllocFromPoolAsync(&block, bytes, pool, consumer);
  cuEventDestroy(done);
  CU_CHECK(rc);
  return block;
}

}  // namespace ex13
