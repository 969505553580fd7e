// Wrong (R2 R3): gives the scratch back with cuMemFree once the stream is done with it
//
// "Wait for the kernel, then free": a synchronisation of a capturing stream is invalid, and in a
// capture cuMemFree cannot free an address that only a graph's allocation node will back. The
// capture is lost and no free node is made.
#include "exercises.hpp"

namespace ex29 {

CUdeviceptr scratchFor(CUstream stream, size_t bytes) {
  CUdeviceptr p = 0;
  CU_CHECK(cuMemAllocAsync(&p, bytes, stream));
  return p;
}

void releaseScratch(CUstream stream, CUdeviceptr scratch) {
  CU_CHECK(cuStreamSynchronize(stream));
  CU_CHECK(cuMemFree(scratch));
}

}  // namespace ex29
