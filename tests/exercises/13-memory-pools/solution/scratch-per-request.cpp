// Reference solution of lesson 13's exercise scratch-per-request (lessons/13-memory-pools/exercises.cpp).
#include "exercises.hpp"

namespace ex13 {

// Every call only enqueues into the request's stream: the allocation, both copies and the free run
// in that order when the stream gets there, and the scratch buffer is the pool's again from the
// free on. The stream's own order is all the synchronisation the buffer needs. The free comes last
// whatever happened to the copies, so a failed copy leaves nothing allocated.
void serveRequest(CUmemoryPool pool, CUstream stream, CUdeviceptr input, CUdeviceptr output, size_t bytes) {
  CUdeviceptr scratch = 0;
  CU_CHECK(cuMemAllocFromPoolAsync(&scratch, bytes, pool, stream));  // this pool, not the current one
  CUresult rc = cuMemcpyDtoDAsync(scratch, input, bytes, stream);
  if (rc == CUDA_SUCCESS) rc = cuMemcpyDtoDAsync(output, scratch, bytes, stream);
  const CUresult freed = cuMemFreeAsync(scratch, stream);  // after the last use, in the same stream
  CU_CHECK(rc);
  CU_CHECK(freed);
}

}  // namespace ex13
