// Wrong (R6): pushes the stream's context for the calls, and a failed copy throws past the pop
//
// "The allocation and the copies must run in the stream's context": cuStreamGetCtx names it, and it
// is pushed for the calls and popped at the end. The scratch buffer still goes back when a copy
// fails, but CU_CHECK then throws before the pop, and the caller's thread is left with one context
// more on its stack. In "R6 R7: when a copy cannot be enqueued ...", `wbx::contextStack() ==
// stackBefore` fails.
#include "exercises.hpp"

namespace ex13 {

void serveRequest(CUmemoryPool pool, CUstream stream, CUdeviceptr input, CUdeviceptr output, size_t bytes) {
  CUcontext ctx = nullptr;
  CU_CHECK(cuStreamGetCtx(stream, &ctx));
  CU_CHECK(cuCtxPushCurrent(ctx));
  CUdeviceptr scratch = 0;
  CU_CHECK(cuMemAllocFromPoolAsync(&scratch, bytes, pool, stream));
  CUresult rc = cuMemcpyDtoDAsync(scratch, input, bytes, stream);
  if (rc == CUDA_SUCCESS) rc = cuMemcpyDtoDAsync(output, scratch, bytes, stream);
  const CUresult freed = cuMemFreeAsync(scratch, stream);
  CU_CHECK(rc);  // throws with ctx still pushed
  CU_CHECK(freed);
  CU_CHECK(cuCtxPopCurrent(&ctx));
}

}  // namespace ex13
