// Wrong (R2): frees in the producer and allocates in the consumer with no event between the streams
//
// "The free is in stream order, so the consumer can have the block." Nothing orders the consumer
// after the producer's pending free: the pool may not reuse the block, and the consumer's work runs
// while the producer's is still going. The consumer's stamp runs while the gate holds the producer:
// `!consumerRanEarly` fails (and `consumerStamp > producerStamp`).
#include "exercises.hpp"

namespace ex13 {

CUdeviceptr handOver(CUmemoryPool pool, CUdeviceptr used, size_t bytes, CUstream producer, CUstream consumer) {
  CU_CHECK(cuMemFreeAsync(used, producer));
  CUdeviceptr block = 0;
  CU_CHECK(cuMemAllocFromPoolAsync(&block, bytes, pool, consumer));
  return block;
}

}  // namespace ex13
