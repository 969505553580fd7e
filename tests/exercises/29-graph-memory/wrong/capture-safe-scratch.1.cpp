// Wrong (R1 R3): allocates with cuMemAlloc, as a caching allocator's slow path does
//
// "Scratch is scratch": outside a capture this works. In the caller's GLOBAL capture the allocation
// is a potentially unsafe call; on driver 580 it returned CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED and
// invalidated the capture (the CUDA 13 test failures of cuopt#1748), so no allocation node is made.
#include "exercises.hpp"

namespace ex29 {

CUdeviceptr scratchFor(CUstream, size_t bytes) {
  CUdeviceptr p = 0;
  CU_CHECK(cuMemAlloc(&p, bytes));
  return p;
}

void releaseScratch(CUstream stream, CUdeviceptr scratch) { CU_CHECK(cuMemFreeAsync(scratch, stream)); }

}  // namespace ex29
