// Wrong (R3): enqueues the free right after the copy in, before the copy out that still reads the buffer
//
// "The free is stream-ordered, so it waits for the copies anyway." It waits for the work before
// it, not after: the copy out reads a buffer the pool may already have given to another stream
// (by an event, or an inserted dependency on this very free). In one stream the data still comes
// out right, so only the order shows: in the captured graph, `GraphShape::after(frees[0], copy)`
// fails for the copy out.
#include "exercises.hpp"

namespace ex13 {

void serveRequest(CUmemoryPool pool, CUstream stream, CUdeviceptr input, CUdeviceptr output, size_t bytes) {
  CUdeviceptr scratch = 0;
  CU_CHECK(cuMemAllocFromPoolAsync(&scratch, bytes, pool, stream));
  const CUresult in = cuMemcpyDtoDAsync(scratch, input, bytes, stream);
  const CUresult freed = cuMemFreeAsync(scratch, stream);
  CU_CHECK(in);
  CU_CHECK(freed);
  CU_CHECK(cuMemcpyDtoDAsync(output, scratch, bytes, stream));
}

}  // namespace ex13
