// Wrong (R5): never destroys the event, "the consumer still waits on it"
//
// The wait is enqueued by the time cuStreamWaitEvent returns, and cuEventDestroy of an event that
// work still depends on is documented as safe: keeping it leaks one event per handover, for the life
// of a server. `left.empty()` fails ("1 event more").
#include "exercises.hpp"

namespace ex13 {

CUdeviceptr handOver(CUmemoryPool pool, CUdeviceptr used, size_t bytes, CUstream producer, CUstream consumer) {
  CU_CHECK(cuMemFreeAsync(used, producer));
  CUevent freed = nullptr;
  CU_CHECK(cuEventCreate(&freed, CU_EVENT_DISABLE_TIMING));
  CUdeviceptr block = 0;
  CU_CHECK(cuEventRecord(freed, producer));
  CU_CHECK(cuStreamWaitEvent(consumer, freed, 0));
  CU_CHECK(cuMemAllocFromPoolAsync(&block, bytes, pool, consumer));
  return block;
}

}  // namespace ex13
