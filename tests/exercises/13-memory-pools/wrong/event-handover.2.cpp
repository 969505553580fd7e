// Wrong (R4): synchronises the producer after the free, then allocates in the consumer
//
// Safe, and the block may be reused: once the host has seen the free done, any stream may have it.
// But the host thread now waits for all of the producer's work, which the task forbids: the gate
// holding the producer gives up at its deadline and `returnedAtOnce` fails.
#include "exercises.hpp"

namespace ex13 {

CUdeviceptr handOver(CUmemoryPool pool, CUdeviceptr used, size_t bytes, CUstream producer, CUstream consumer) {
  CU_CHECK(cuMemFreeAsync(used, producer));
  CU_CHECK(cuStreamSynchronize(producer));
  CUdeviceptr block = 0;
  CU_CHECK(cuMemAllocFromPoolAsync(&block, bytes, pool, consumer));
  return block;
}

}  // namespace ex13
