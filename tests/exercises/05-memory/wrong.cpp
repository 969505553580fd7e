// Deliberately wrong variants of lesson 05's exercises: each check must fail on them.
#include "exercises.hpp"

#include <cstring>
#include <stdexcept>
#include <string>

namespace ex05 {

// Wrong: takes the first staging buffer that is large enough, without asking whether its copy has
// run ("the copies are in stream order, so the buffer is done before anything else uses it"). The
// stream's order says nothing about the host's memcpy: the second upload refills the buffer of the
// first, whose copy is still held behind the gate, so the first destination receives the second
// batch and `download<unsigned>(dstFirst.get(), n) == first` fails.
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

// Wrong: the count is taken as bytes, as std::memset takes it. Right for 1-byte elements; for
// larger ones it sets elementSize times too many, and `changedOutside == 0` fails (the check's
// buffer has room for them, so they change its bytes rather than fault).
void fillElements(CUdeviceptr dst, const void* value, size_t elementSize, size_t count) {
  const size_t bytes = count * elementSize;
  switch (elementSize) {
    case 1: {
      unsigned char v = 0;
      std::memcpy(&v, value, 1);
      CU_CHECK(cuMemsetD8(dst, v, bytes));
      return;
    }
    case 2: {
      unsigned short v = 0;
      std::memcpy(&v, value, 2);
      CU_CHECK(cuMemsetD16(dst, v, bytes));
      return;
    }
    case 4: {
      unsigned int v = 0;
      std::memcpy(&v, value, 4);
      CU_CHECK(cuMemsetD32(dst, v, bytes));
      return;
    }
    case 8: {
      unsigned int half[2] = {0, 0};
      std::memcpy(half, value, 8);
      CU_CHECK(cuMemsetD2D32(dst, 8, half[0], 1, bytes));
      CU_CHECK(cuMemsetD2D32(dst + 4, 8, half[1], 1, bytes));
      return;
    }
    default:
      throw std::invalid_argument("fillElements: an element is 1, 2, 4 or 8 bytes, not " + std::to_string(elementSize));
  }
}

// Wrong: "if the driver knows the pointer, it is device memory". Pinned host memory belongs to a
// context too, so CU_POINTER_ATTRIBUTE_CONTEXT answers for it and cuMemAllocHost memory is called
// Device: `atStart == ex05::MemoryKind::PinnedHost` fails (and the registered range likewise).
MemoryKind memoryKind(const void* p) {
  CUcontext owner = nullptr;
  const CUresult rc = cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_CONTEXT, reinterpret_cast<CUdeviceptr>(p));
  return rc == CUDA_SUCCESS ? MemoryKind::Device : MemoryKind::PageableHost;
}

}  // namespace ex05
