// Wrong (R4): CU_CHECKs each allocation in the constructor, leaving what was made behind when one fails
//
// The common shape, and a constructor that throws runs no destructor: the buffers and events made
// before the failure are never given back. In "R4: a constructor whose second event or second
// buffer cannot be made ...", `left == ""` fails ("2 pinned host allocations more, 1 event more").
#include "exercises.hpp"

#include <cstring>
#include <stdexcept>

namespace ex09 {

StagingRing::StagingRing(unsigned buffers, std::size_t bytesEach) : slots_(buffers), bytesEach_(bytesEach) {
  if (buffers == 0 || bytesEach == 0)
    throw std::invalid_argument("StagingRing: a ring needs at least one buffer of at least one byte");
  for (Slot& slot : slots_) {
    CU_CHECK(cuMemAllocHost(&slot.host, bytesEach));
    CU_CHECK(cuEventCreate(&slot.copied, CU_EVENT_DISABLE_TIMING));
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
