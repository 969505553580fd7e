// Wrong (R7): pushes the consumer's context for the allocation, and a failed allocation throws past the pop
//
// "cuMemAllocFromPoolAsync allocates for the current context, so make the consumer's current":
// cuStreamGetCtx names it, it is pushed before the allocation and popped after it, but CU_CHECK
// throws in between when the allocation fails, and the caller's thread keeps one context more on
// its stack. In "R1 R3 R5 R6 R7: when the record, the wait or the allocation fails ...",
// `wbx::contextStack() == stackBefore` fails for the failed allocation.
#include "exercises.hpp"

namespace ex13 {

CUdeviceptr handOver(CUmemoryPool pool, CUdeviceptr used, size_t bytes, CUstream producer, CUstream consumer) {
  CU_CHECK(cuMemFreeAsync(used, producer));
  CUevent freed = nullptr;
  CU_CHECK(cuEventCreate(&freed, CU_EVENT_DISABLE_TIMING));
  CUresult rc = cuEventRecord(freed, producer);
  if (rc == CUDA_SUCCESS) rc = cuStreamWaitEvent(consumer, freed, 0);
  cuEventDestroy(freed);
  CU_CHECK(rc);
  CUcontext ctx = nullptr;
  CU_CHECK(cuStreamGetCtx(consumer, &ctx));
  CU_CHECK(cuCtxPushCurrent(ctx));
  CUdeviceptr block = 0;
  CU_CHECK(cuMemAllocFromPoolAsync(&block, bytes, pool, consumer));  // throws with ctx still pushed
  CU_CHECK(cuCtxPopCurrent(&ctx));
  return block;
}

}  // namespace ex13
