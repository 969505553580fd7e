// Wrong (R1): allocates each buffer and its event in tryUpload, the first time the slot is used
//
// "Allocate lazily: a ring that is never filled costs nothing." But cuMemAllocHost is slow and may
// wait for the device, on the producer's thread that must never block, in the middle of a burst.
// In the first case, tryUpload allocates and `allocated == 0 && heldMore == ""` fails.
#include "exercises.hpp"

#include <cstring>
#include <stdexcept>

namespace ex09 {

StagingRing::StagingRing(unsigned buffers, std::size_t bytesEach) : slots_(buffers), bytesEach_(bytesEach) {
  if (buffers == 0 || bytesEach == 0)
    throw std::invalid_argument("StagingRing: a ring needs at least one buffer of at least one byte");

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
  if (!slot.host) {
    CU_CHECK(cuMemAllocHost(&slot.host, bytesEach_));
    if (const CUresult rc = cuEventCreate(&slot.copied, CU_EVENT_DISABLE_TIMING); rc != CUDA_SUCCESS) {
      cuMemFreeHost(slot.host);
      slot.host = nullptr;
      CU_CHECK(rc);
    }
  }
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
