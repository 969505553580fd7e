// Wrong (R7): checks every call with CU_CHECK, so a copy that cannot be enqueued leaves the scratch buffer allocated
//
// The natural way to write it: each call checked as it is made. When a copy fails, CU_CHECK throws
// before the free is enqueued, and the buffer stays the request's for the life of the process: in
// the check's failure case `pool.stat(CU_MEMPOOL_ATTR_USED_MEM_CURRENT) == 0` fails (and what is
// left held says "1 device allocation more").
#include "exercises.hpp"

namespace ex13 {

void serveRequest(CUmemoryPool pool, CUstream stream, CUdeviceptr input, CUdeviceptr output, size_t bytes) {
  CUdeviceptr scratch = 0;
  CU_CHECK(cuMemAllocFromPoolAsync(&scratch, bytes, pool, stream));
  CU_CHECK(cuMemcpyDtoDAsync(scratch, input, bytes, stream));
  CU_CHECK(cuMemcpyDtoDAsync(output, scratch, bytes, stream));
  CU_CHECK(cuMemFreeAsync(scratch, stream));
}

}  // namespace ex13
