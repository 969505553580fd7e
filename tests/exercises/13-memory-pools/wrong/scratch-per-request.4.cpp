// Wrong (R3): frees the scratch buffer with cuMemFree, which the reference says does not synchronise for pool memory
//
// "cuMemFree takes a pool pointer and does not block: just as good." It frees the buffer at once,
// while the copies that use it are still queued behind the gate: only luck keeps the memory
// mapped until they run. `wbx::calls("cuMemFree") == freesBefore` fails (and under stream capture
// the graph holds no free).
#include "exercises.hpp"

namespace ex13 {

void serveRequest(CUmemoryPool pool, CUstream stream, CUdeviceptr input, CUdeviceptr output, size_t bytes) {
  CUdeviceptr scratch = 0;
  CU_CHECK(cuMemAllocFromPoolAsync(&scratch, bytes, pool, stream));
  CUresult rc = cuMemcpyDtoDAsync(scratch, input, bytes, stream);
  if (rc == CUDA_SUCCESS) rc = cuMemcpyDtoDAsync(output, scratch, bytes, stream);
  const CUresult freed = cuMemFree(scratch);
  CU_CHECK(rc);
  CU_CHECK(freed);
}

}  // namespace ex13
