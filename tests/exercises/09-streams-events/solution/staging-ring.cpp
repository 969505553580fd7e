// Reference solution of lesson 09's exercise staging-ring (lessons/09-streams-events/exercises.cpp).
#include "exercises.hpp"

#include <cstring>
#include <stdexcept>

namespace ex09 {

// Each buffer has an event recorded right behind the copy that reads it, so "the copy has run" is a
// question cuEventQuery answers at once, without waiting. The ring takes its buffers in order, so
// the next one is always the one whose copy was enqueued longest ago: if even that copy is pending,
// every buffer is busy, and the producer is told so instead of being blocked. Everything is
// allocated here, once; a constructor that throws runs no destructor, so it gives back what it made.
StagingRing::StagingRing(unsigned buffers, std::size_t bytesEach) : slots_(buffers), bytesEach_(bytesEach) {
  if (buffers == 0 || bytesEach == 0)
    throw std::invalid_argument("StagingRing: a ring needs at least one buffer of at least one byte");
  for (Slot& slot : slots_) {
    CUresult rc = cuMemAllocHost(&slot.host, bytesEach);
    if (rc == CUDA_SUCCESS) rc = cuEventCreate(&slot.copied, CU_EVENT_DISABLE_TIMING);
    if (rc != CUDA_SUCCESS) {
      for (Slot& made : slots_) {
        if (made.copied) cuEventDestroy(made.copied);
        if (made.host) cuMemFreeHost(made.host);
      }
      CU_CHECK(rc);
    }
  }
}

// A copy still pending reads its buffer: wait for it before the memory goes back.
StagingRing::~StagingRing() {
  for (Slot& slot : slots_) {
    if (slot.used) cuEventSynchronize(slot.copied);
    if (slot.copied) cuEventDestroy(slot.copied);
    if (slot.host) cuMemFreeHost(slot.host);
  }
}

// NOT_READY is the answer "busy"; any other error is a failure (a fault, a lost context), not a
// reason to drop frames forever. The slot is marked used and the ring moved on only once its copy
// and its event are both enqueued: a copy that fails leaves the ring as it was. Should the record
// fail after the copy was enqueued, no event guards the buffer, so the stream is waited for before
// the exception leaves and the buffer can be taken again.
bool StagingRing::tryUpload(const void* src, std::size_t bytes, CUdeviceptr dst, CUstream stream) {
  if (bytes > bytesEach_) throw std::invalid_argument("StagingRing::tryUpload: more bytes than a staging buffer holds");
  Slot& slot = slots_.at(next_);
  if (slot.used) {
    const CUresult done = cuEventQuery(slot.copied);
    if (done == CUDA_ERROR_NOT_READY) return false;  // an answer, not an error
    CU_CHECK(done);
  }
  std::memcpy(slot.host, src, bytes);  // the caller may reuse src once this returns
  CU_CHECK(cuMemcpyHtoDAsync(dst, slot.host, bytes, stream));
  if (const CUresult recorded = cuEventRecord(slot.copied, stream); recorded != CUDA_SUCCESS) {
    cuStreamSynchronize(stream);
    CU_CHECK(recorded);
  }
  slot.used = true;
  next_ = (next_ + 1) % slots_.size();
  return true;
}

}  // namespace ex09
