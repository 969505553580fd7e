// Reference solution of lesson 29's exercise capture-safe-scratch (lessons/29-graph-memory/exercises.cpp).
#include "exercises.hpp"

namespace ex29 {

// Stream-ordered both ways: in a capture the two calls are recorded as an allocation node and a free
// node (the graph owns the memory); outside one they take and give back memory of the device's
// current pool in the order of the stream. Neither waits for anything.
CUdeviceptr scratchFor(CUstream stream, size_t bytes) {
  CUdeviceptr p = 0;
  CU_CHECK(cuMemAllocAsync(&p, bytes, stream));
  return p;
}

void releaseScratch(CUstream stream, CUdeviceptr scratch) { CU_CHECK(cuMemFreeAsync(scratch, stream)); }

}  // namespace ex29
