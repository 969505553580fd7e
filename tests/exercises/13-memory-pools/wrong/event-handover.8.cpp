// Wrong (R6): does not look at what cuStreamWaitEvent returns, "a wait on a recorded event cannot fail"
//
// The wait is a call of its own, and when it fails the consumer is ordered after nothing: its
// block and its later work may run while the producer still uses the memory, and the caller is
// told the hand-over worked. In "R1 R3 R5 R6 R7: when the record, the wait or the allocation fails
// ...", the failed wait returns a block: `wait.threw` fails.
#include "exercises.hpp"

namespace ex13 {

CUdeviceptr handOver(CUmemoryPool pool, CUdeviceptr used, size_t bytes, CUstream producer, CUstream consumer) {
  CU_CHECK(cuMemFreeAsync(used, producer));
  CUevent freed = nullptr;
  CU_CHECK(cuEventCreate(&freed, CU_EVENT_DISABLE_TIMING));
  CUdeviceptr block = 0;
  CUresult rc = cuEventRecord(freed, producer);
  if (rc == CUDA_SUCCESS) {
    cuStreamWaitEvent(consumer, freed, 0);
    rc = cuMemAllocFromPoolAsync(&block, bytes, pool, consumer);
  }
  cuEventDestroy(freed);
  CU_CHECK(rc);
  return block;
}

}  // namespace ex13
