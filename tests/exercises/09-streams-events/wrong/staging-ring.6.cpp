// Wrong (R11): the destructor frees the buffers but never destroys the events
//
// Pinned memory is the scarce resource, so it is given back; the events are forgotten. A producer
// that makes a ring per stream or per session leaks an event per buffer each time. In the first
// case, `leftByRing == ""` fails ("2 events more").
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
