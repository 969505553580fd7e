// Reference solutions of lesson 05's exercises.
#include "exercises.hpp"

#include <cstring>
#include <stdexcept>
#include <string>

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

// The counts are elements. The value's bytes go into an integer of the element's size with memcpy,
// so they land in memory in the same order (and no type is punned). An 8-byte element is two 4-byte
// words: a 2D memset with rows 8 bytes apart sets one word in each, first the low ones, then the
// high ones.
void fillElements(CUdeviceptr dst, const void* value, size_t elementSize, size_t count) {
  switch (elementSize) {
    case 1: {
      unsigned char v = 0;
      std::memcpy(&v, value, 1);
      CU_CHECK(cuMemsetD8(dst, v, count));
      return;
    }
    case 2: {
      unsigned short v = 0;
      std::memcpy(&v, value, 2);
      CU_CHECK(cuMemsetD16(dst, v, count));
      return;
    }
    case 4: {
      unsigned int v = 0;
      std::memcpy(&v, value, 4);
      CU_CHECK(cuMemsetD32(dst, v, count));
      return;
    }
    case 8: {
      unsigned int half[2] = {0, 0};
      std::memcpy(half, value, 8);
      CU_CHECK(cuMemsetD2D32(dst, 8, half[0], 1, count));
      CU_CHECK(cuMemsetD2D32(dst + 4, 8, half[1], 1, count));
      return;
    }
    default:
      throw std::invalid_argument("fillElements: an element is 1, 2, 4 or 8 bytes, not " + std::to_string(elementSize));
  }
}

// With unified addressing every allocation the driver made or registered has a place in one address
// space, so the address alone says what it is, whichever context made it. Pinned host memory is
// known to the driver too: what tells it from device memory is its type, not that the driver knows
// it. Memory the driver never saw is CUDA_ERROR_INVALID_VALUE: an answer, not a failure.
MemoryKind memoryKind(const void* p) {
  unsigned type = 0;
  const CUresult rc = cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, reinterpret_cast<CUdeviceptr>(p));
  if (rc == CUDA_ERROR_INVALID_VALUE) return MemoryKind::PageableHost;
  CU_CHECK(rc);
  return type == CU_MEMORYTYPE_HOST ? MemoryKind::PinnedHost : MemoryKind::Device;
}

}  // namespace ex05
