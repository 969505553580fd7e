// Wrong (R2): accepts a ring of 0 buffers or of 0 bytes
//
// Nothing is allocated for them and the constructor returns: the mistake shows only later, as a
// division by zero when the ring moves on (0 buffers) or a copy of nothing (0 bytes). In "R2 R3: a
// ring of 0 buffers ...", `noBuffers == "std::invalid_argument"` fails.
#include "exercises.hpp"

#include <cstring>
#include <stdexcept>

namespace ex09 {

StagingRing::StagingRing(unsigned buffers, std::size_t bytesEach) : slots_(buffers), bytesEach_(bytesEach) {
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
