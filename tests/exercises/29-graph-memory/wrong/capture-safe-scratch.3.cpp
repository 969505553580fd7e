// Wrong (R1): allocates in the legacy default stream, not in the caller's stream
//
// "Stream-ordered allocation, on the default stream": the caller's non-blocking stream is not
// ordered after the legacy stream, and its capture does not see the allocation at all: the graph gets
// no allocation node, and a free node of memory it did not allocate is refused.
#include "exercises.hpp"

namespace ex29 {

CUdeviceptr scratchFor(CUstream, size_t bytes) {
  CUdeviceptr p = 0;
  CU_CHECK(cuMemAllocAsync(&p, bytes, CU_STREAM_LEGACY));
  return p;
}

void releaseScratch(CUstream stream, CUdeviceptr scratch) { CU_CHECK(cuMemFreeAsync(scratch, stream)); }

}  // namespace ex29
