// Wrong (R4): returns whatever cuMemAllocAsync left in the pointer, error or not
//
// "It never fails in practice": when the pool is out of memory the caller gets address 0 and its
// kernel writes there. The failure must reach the caller as wb::DriverError.
#include "exercises.hpp"

namespace ex29 {

CUdeviceptr scratchFor(CUstream stream, size_t bytes) {
  CUdeviceptr p = 0;
  cuMemAllocAsync(&p, bytes, stream);
  return p;
}

void releaseScratch(CUstream stream, CUdeviceptr scratch) { cuMemFreeAsync(scratch, stream); }

}  // namespace ex29
