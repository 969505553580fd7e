// Deliberately wrong variants of lesson 13's exercises: each check must fail on them.
#include "exercises.hpp"

#include <cstdint>

namespace ex13 {

// Wrong: synchronises the stream before returning, "so that the scratch buffer is surely back in the
// pool". The host now waits for the request's whole work: the check's gate gives up at its
// deadline, and `seen == wb::Gate::Waiting` fails.
void serveRequest(CUmemoryPool pool, CUstream stream, CUdeviceptr input, CUdeviceptr output, size_t bytes) {
  CUdeviceptr scratch = 0;
  CU_CHECK(cuMemAllocFromPoolAsync(&scratch, bytes, pool, stream));
  CU_CHECK(cuMemcpyDtoDAsync(scratch, input, bytes, stream));
  CU_CHECK(cuMemcpyDtoDAsync(output, scratch, bytes, stream));
  CU_CHECK(cuMemFreeAsync(scratch, stream));
  CU_CHECK(cuStreamSynchronize(stream));
}

// Wrong: UINT64_MAX, as the programming guide's example sets it. The working set stays reserved, but
// so does every burst, for good: after the step of twice the working set the pool still holds it,
// and the check's last assertion (no more than the working set reserved after the burst) fails.
CUmemoryPool createSteadyPool(CUdevice dev, size_t workingSetBytes) {
  (void)workingSetBytes;
  CUmemPoolProps props{};
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.handleTypes = CU_MEM_HANDLE_TYPE_NONE;
  props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  props.location.id = dev;
  CUmemoryPool pool = nullptr;
  CU_CHECK(cuMemPoolCreate(&pool, &props));
  cuuint64_t keep = UINT64_MAX;
  CU_CHECK(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keep));
  return pool;
}

// Wrong: "the free is in stream order, so the consumer can have the block", with no event between
// the streams. Nothing orders the consumer after the producer's pending free, so the pool maps a new
// block (`handed.p == freed` fails) and the consumer's work runs while the producer's is still
// going (`consumerEarly == 0` fails).
CUdeviceptr handOver(CUmemoryPool pool, CUdeviceptr used, size_t bytes, CUstream producer, CUstream consumer) {
  CU_CHECK(cuMemFreeAsync(used, producer));
  CUdeviceptr block = 0;
  CU_CHECK(cuMemAllocFromPoolAsync(&block, bytes, pool, consumer));
  return block;
}

}  // namespace ex13
