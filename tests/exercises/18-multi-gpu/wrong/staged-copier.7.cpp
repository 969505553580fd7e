// Wrong (R1): allocates the staging buffers in copy, sized to each call, and frees them there
//
// "Allocate what this copy needs, give it back when done: nothing is held between calls." Pinned
// allocations are slow (lesson 05), and the task asks for two buffers made once, by the
// constructor: `made == "2 pinned host allocations more"` and `allocated == 0` fail.
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

// One side of a copy: a stream of ctx and two events recorded in it, made here and given back at
// scope exit, after the stream has run what was enqueued (on a failed copy too, so that no copy
// still uses a staging buffer once copy has returned or thrown).
struct Side {
  CUcontext ctx;
  CUstream stream = nullptr;
  CUevent done[2] = {nullptr, nullptr};
  explicit Side(CUcontext c) : ctx(c) {
    try {
      On on(ctx);
      CU_CHECK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
      for (CUevent& e : done) CU_CHECK(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
    } catch (...) {
      release();  // a throwing constructor runs no destructor
      throw;
    }
  }
  ~Side() { release(); }
  Side(const Side&) = delete;
  Side& operator=(const Side&) = delete;
  void release() {
    if (cuCtxPushCurrent(ctx) != CUDA_SUCCESS) return;
    if (stream) cuStreamSynchronize(stream);
    for (CUevent e : done)
      if (e) cuEventDestroy(e);
    if (stream) cuStreamDestroy(stream);
    CUcontext popped = nullptr;
    cuCtxPopCurrent(&popped);
  }
};

}  // namespace

StagedCopier::StagedCopier(std::size_t chunkBytes) : chunkBytes_(chunkBytes) {}

StagedCopier::~StagedCopier() {}

void StagedCopier::copy(CUdeviceptr dst, CUcontext dstCtx, CUdeviceptr src, CUcontext srcCtx, std::size_t bytes) {
  if (bytes == 0) return;
  for (void*& buffer : staging_) {
    On on(srcCtx);
    CU_CHECK(cuMemHostAlloc(&buffer, std::min(chunkBytes_, bytes), CU_MEMHOSTALLOC_PORTABLE));
  }
  struct Free {
    void** staging;
    ~Free() {
      for (int k = 0; k < 2; ++k) cuMemFreeHost(staging[k]), staging[k] = nullptr;
    }
  } freeAtEnd{staging_};
  Side down(srcCtx), up(dstCtx);
  for (std::size_t offset = 0, i = 0; offset < bytes; offset += chunkBytes_, ++i) {
    const std::size_t k = i % 2, n = std::min(chunkBytes_, bytes - offset);
    {
      On on(srcCtx);
      if (i >= 2) CU_CHECK(cuStreamWaitEvent(down.stream, up.done[k], 0));  // its last copy up has read it
      CU_CHECK(cuMemcpyDtoHAsync(staging_[k], src + offset, n, down.stream));
      CU_CHECK(cuEventRecord(down.done[k], down.stream));
    }
    On on(dstCtx);
    CU_CHECK(cuStreamWaitEvent(up.stream, down.done[k], 0));
    CU_CHECK(cuMemcpyHtoDAsync(dst + offset, staging_[k], n, up.stream));
    CU_CHECK(cuEventRecord(up.done[k], up.stream));
  }
  On on(dstCtx);
  CU_CHECK(cuStreamSynchronize(up.stream));  // every copy up followed its copy down
}

}  // namespace ex18
