// Wrong: reuses the first staging buffer that is large enough, without asking whether its copy has run
//
// "The copies are in stream order, so the buffer is done before anything else uses it." The
// stream's order says nothing about the host's memcpy: the second upload refills the buffer of the
// first, whose copy is still held behind the gate, so the first destination receives the second
// batch and `download<unsigned>(dstFirst.get(), n) == first` fails.
#include "exercises.hpp"

#include <cstring>

namespace ex05 {

void StagingUploader::upload(CUdeviceptr dst, const void* src, size_t bytes, CUstream stream) {
  size_t use = staging_.size();
  for (size_t i = 0; i < staging_.size() && use == staging_.size(); ++i)
    if (staging_[i].bytes >= bytes) use = i;
  if (use == staging_.size()) reserve(staging_.size() + 1, bytes);
  std::memcpy(staging_[use].host, src, bytes);
  CU_CHECK(cuMemcpyHtoDAsync(dst, staging_[use].host, bytes, stream));
}

void StagingUploader::reserve(size_t count, size_t bytes) {
  size_t large = 0;
  for (const Staging& s : staging_) large += s.bytes >= bytes;
  for (; large < count; ++large) {
    Staging s;
    CU_CHECK(cuMemAllocHost(&s.host, bytes));
    s.bytes = bytes;
    staging_.push_back(s);
  }
}

size_t StagingUploader::stagingBuffers() const { return staging_.size(); }

StagingUploader::~StagingUploader() {
  cuCtxSynchronize();  // no events to wait for: wait for everything
  for (Staging& s : staging_) cuMemFreeHost(s.host);
}

}  // namespace ex05
