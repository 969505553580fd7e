// Wrong (R4): synchronises the stream before returning, so that the scratch buffer is surely back in the pool
//
// "The free is asynchronous, so wait for it to be sure." The host now waits for the request's whole
// work: the check's gate gives up at its deadline, and `seen == wb::Gate::Waiting` fails.
#include "exercises.hpp"

namespace ex13 {

void serveRequest(CUmemoryPool pool, CUstream stream, CUdeviceptr input, CUdeviceptr output, size_t bytes) {
  CUdeviceptr scratch = 0;
  CU_CHECK(cuMemAllocFromPoolAsync(&scratch, bytes, pool, stream));
  CUresult rc = cuMemcpyDtoDAsync(scratch, input, bytes, stream);
  if (rc == CUDA_SUCCESS) rc = cuMemcpyDtoDAsync(output, scratch, bytes, stream);
  const CUresult freed = cuMemFreeAsync(scratch, stream);
  CU_CHECK(rc);
  CU_CHECK(freed);
  CU_CHECK(cuStreamSynchronize(stream));
}

}  // namespace ex13
