// Wrong (R1): asks cuDeviceCanAccessPeer even when both contexts are on one device
//
// "Two contexts, so ask whether they can reach each other." For a device and itself the reference
// defines no answer; driver 580 answers 0 (lesson 18, step 1), so this stages a copy within one
// device: it waits for the stream, and `one.returnedWhileHeld` fails (with another answer it
// enables access between two contexts of one device, which is refused).
#include "exercises.hpp"

namespace ex18 {

namespace {

// A context pushed for a scope and popped at its end, a throw's too: the caller's stack is left as
// it was found, whatever it held.
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

CUdevice deviceOf(CUcontext ctx) {
  On on(ctx);
  CUdevice dev = 0;
  CU_CHECK(cuCtxGetDevice(&dev));
  return dev;
}

bool canAccess(CUdevice from, CUdevice to) {
  int can = 0;
  CU_CHECK(cuDeviceCanAccessPeer(&can, from, to));
  return can == 1;
}

// Enables access from `from` to the memory of `to`; already enabled is what was wanted.
void enable(CUcontext from, CUcontext to) {
  On on(from);
  const CUresult rc = cuCtxEnablePeerAccess(to, 0);
  if (rc != CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED) CU_CHECK(rc);
}

// Pinned host memory that every context treats as pinned, freed at scope exit.
class PortableBuffer {
 public:
  PortableBuffer(CUcontext ctx, std::size_t bytes) : ctx_(ctx) {
    On on(ctx);
    CU_CHECK(cuMemHostAlloc(&p_, bytes, CU_MEMHOSTALLOC_PORTABLE));
  }
  ~PortableBuffer() {
    if (cuCtxPushCurrent(ctx_) != CUDA_SUCCESS) return;
    cuMemFreeHost(p_);
    CUcontext popped = nullptr;
    cuCtxPopCurrent(&popped);
  }
  PortableBuffer(const PortableBuffer&) = delete;
  PortableBuffer& operator=(const PortableBuffer&) = delete;
  void* get() const { return p_; }

 private:
  CUcontext ctx_;
  void* p_ = nullptr;
};

}  // namespace

void copyAcross(CUdeviceptr dst, CUcontext dstCtx, CUdeviceptr src, CUcontext srcCtx, std::size_t bytes,
                CUstream stream) {
  const CUdevice dstDev = deviceOf(dstCtx), srcDev = deviceOf(srcCtx);
  const bool link = canAccess(dstDev, srcDev) && canAccess(srcDev, dstDev);
  if (link) {
    enable(dstCtx, srcCtx);
    enable(srcCtx, dstCtx);
  }
  if (link) {
    On on(srcCtx);  // the stream's context
    CU_CHECK(cuMemcpyPeerAsync(dst, dstCtx, src, srcCtx, bytes, stream));
    return;
  }
  {
    On on(srcCtx);
    CU_CHECK(cuStreamSynchronize(stream));  // whatever writes the source in the stream comes first
  }
  if (bytes == 0) return;
  PortableBuffer staging(srcCtx, bytes);
  {
    On on(srcCtx);
    CU_CHECK(cuMemcpyDtoH(staging.get(), src, bytes));
  }
  On on(dstCtx);
  CU_CHECK(cuMemcpyHtoD(dst, staging.get(), bytes));  // from pinned memory: done when it returns
}

}  // namespace ex18
