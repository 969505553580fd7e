// Reference solution of lesson 05's exercise staging-copy (lessons/05-memory/exercises.cpp).
#include "exercises.hpp"

#include <cstring>

namespace ex05 {

// A buffer is free once the stream has passed the event recorded after its copy (an event never
// recorded counts as passed). cuEventQuery asks without waiting.
static bool isFree(CUevent copied) {
  const CUresult q = cuEventQuery(copied);
  if (q == CUDA_ERROR_NOT_READY) return false;
  CU_CHECK(q);
  return true;
}

// Allocates one more staging buffer: pinned memory, and its event.
static void addStaging(std::vector<StagingUploader::Staging>& staging, size_t bytes) {
  StagingUploader::Staging s;
  CU_CHECK(cuMemAllocHost(&s.host, bytes));
  s.bytes = bytes;
  if (const CUresult rc = cuEventCreate(&s.copied, CU_EVENT_DISABLE_TIMING); rc != CUDA_SUCCESS) {
    cuMemFreeHost(s.host);  // nothing half-made stays behind
    CU_CHECK(rc);
  }
  staging.push_back(s);
}

// The source is copied into pinned memory at once, so the caller may refill it as soon as this
// returns; the DMA from the pinned buffer is only enqueued. Until the stream has passed a buffer's
// event, its copy may still read it: such a buffer is not ours to overwrite, and rather than wait
// for it we take another. After a burst the buffers stay for the next one.
void StagingUploader::upload(CUdeviceptr dst, const void* src, size_t bytes, CUstream stream) {
  size_t use = staging_.size();
  for (size_t i = 0; i < staging_.size() && use == staging_.size(); ++i)
    if (staging_[i].bytes >= bytes && isFree(staging_[i].copied)) use = i;
  if (use == staging_.size()) addStaging(staging_, bytes);
  Staging& s = staging_[use];
  std::memcpy(s.host, src, bytes);                         // the caller's buffer is free again from here
  CU_CHECK(cuMemcpyHtoDAsync(dst, s.host, bytes, stream));  // from pinned memory: only enqueued
  CU_CHECK(cuEventRecord(s.copied, stream));                // busy until the stream passes this point
}

// The slow part, cuMemAllocHost, done before the burst instead of during it.
void StagingUploader::reserve(size_t count, size_t bytes) {
  size_t large = 0;
  for (const Staging& s : staging_) large += s.bytes >= bytes;
  for (; large < count; ++large) addStaging(staging_, bytes);
}

size_t StagingUploader::stagingBuffers() const { return staging_.size(); }

// A pending copy still reads its buffer: wait for it before the memory goes back.
StagingUploader::~StagingUploader() {
  for (Staging& s : staging_) {
    cuEventSynchronize(s.copied);
    cuEventDestroy(s.copied);
    cuMemFreeHost(s.host);
  }
}

}  // namespace ex05
