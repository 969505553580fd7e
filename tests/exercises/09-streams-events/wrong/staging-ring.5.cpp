// Wrong (R5): asks whether the whole stream is idle (cuStreamQuery) instead of whether this buffer's copy has run
//
// "If the stream has finished, every buffer is free": true, but far from the only time a buffer
// is free. Any work in the stream, the caller's own included, makes every upload refused, and the
// producer drops frames while buffers are free. With the gate holding the stream, the first upload
// is refused: `accepted[0]` fails.
#include "exercises.hpp"

#include <cstring>
#include <stdexcept>

namespace ex09 {

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

StagingRing::~StagingRing() {
  for (Slot& slot : slots_) {
    if (slot.used) cuEventSynchronize(slot.copied);
    if (slot.copied) cuEventDestroy(slot.copied);
    if (slot.host) cuMemFreeHost(slot.host);
  }
}

bool StagingRing::tryUpload(const void* src, std::size_t bytes, CUdeviceptr dst, CUstream stream) {
  if (bytes > bytesEach_) throw std::invalid_argument("StagingRing::tryUpload: more bytes than a staging buffer holds");
  Slot& slot = slots_.at(next_);
  const CUresult idle = cuStreamQuery(stream);
  if (idle == CUDA_ERROR_NOT_READY) return false;
  CU_CHECK(idle);
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
