// Wrong (R4): destroys its streams and events at the end of copy, so a failed call leaves them behind
//
// "Create, copy, synchronise, destroy." When a copy fails, CU_CHECK throws past the destroying:
// each failed copy leaks two streams and four events (and the copies already enqueued may still
// be running). `held == ""` fails after the check fails the third copy up.
#include "exercises.hpp"

#include <algorithm>

namespace ex18 {

namespace {

// A context pushed for a scope and popped at its end, a throw's too.
class On {
 public:
  explicit On(CUcontext ctx) { CU_CHECK(cuCtxPushCurrent(ctx)); }
  ~On() {
    CUcontext popped = nullptr;
    cuCtxPopCurrent(&popped);
  }
  On(const On&) = delete;
  On& operator=(const On&) = delete;
};

}  // namespace

StagedCopier::StagedCopier(std::size_t chunkBytes) : chunkBytes_(chunkBytes) {
  for (void*& buffer : staging_) {
    const CUresult rc = cuMemHostAlloc(&buffer, chunkBytes, CU_MEMHOSTALLOC_PORTABLE);
    if (rc != CUDA_SUCCESS) {  // a throwing constructor runs no destructor: free what was taken
      buffer = nullptr;
      for (void* taken : staging_)
        if (taken) cuMemFreeHost(taken);
      CU_CHECK(rc);
    }
  }
}

StagedCopier::~StagedCopier() {
  for (void*& buffer : staging_) {
    if (buffer) cuMemFreeHost(buffer);
    buffer = nullptr;
  }
}

void StagedCopier::copy(CUdeviceptr dst, CUcontext dstCtx, CUdeviceptr src, CUcontext srcCtx, std::size_t bytes) {
  if (bytes == 0) return;
  CUstream down = nullptr, up = nullptr;
  CUevent downloaded[2] = {}, uploaded[2] = {};
  {
    On on(srcCtx);
    CU_CHECK(cuStreamCreate(&down, CU_STREAM_NON_BLOCKING));
    for (CUevent& e : downloaded) CU_CHECK(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
  }
  {
    On on(dstCtx);
    CU_CHECK(cuStreamCreate(&up, CU_STREAM_NON_BLOCKING));
    for (CUevent& e : uploaded) CU_CHECK(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
  }
  for (std::size_t offset = 0, i = 0; offset < bytes; offset += chunkBytes_, ++i) {
    const std::size_t k = i % 2, n = std::min(chunkBytes_, bytes - offset);
    {
      On on(srcCtx);
      if (i >= 2) CU_CHECK(cuStreamWaitEvent(down, uploaded[k], 0));
      CU_CHECK(cuMemcpyDtoHAsync(staging_[k], src + offset, n, down));
      CU_CHECK(cuEventRecord(downloaded[k], down));
    }
    On on(dstCtx);
    CU_CHECK(cuStreamWaitEvent(up, downloaded[k], 0));
    CU_CHECK(cuMemcpyHtoDAsync(dst + offset, staging_[k], n, up));
    CU_CHECK(cuEventRecord(uploaded[k], up));
  }
  {
    On on(dstCtx);
    CU_CHECK(cuStreamSynchronize(up));
    for (CUevent e : uploaded) CU_CHECK(cuEventDestroy(e));
    CU_CHECK(cuStreamDestroy(up));
  }
  On on(srcCtx);
  for (CUevent e : downloaded) CU_CHECK(cuEventDestroy(e));
  CU_CHECK(cuStreamDestroy(down));
}

}  // namespace ex18
