// Wrong (R3): asks cuDeviceCanAccessPeer for one direction only, as if access were symmetric
//
// "If the source's device can reach the destination's, the link is there." Access is per direction:
// with the other direction refused, this enables access (which fails on real hardware that refuses
// it) and enqueues a peer copy that does not wait for the stream and has not arrived when it
// returns. `staged.openedOnWait` and `staged.arrivedAtReturn` fail when the check refuses 1 -> 0.
// Two devices: with one, no pair of devices is asked about.
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
  const bool oneDevice = dstDev == srcDev;
  const bool link = !oneDevice && canAccess(srcDev, dstDev);
  if (link) {
    enable(dstCtx, srcCtx);
    enable(srcCtx, dstCtx);
  }
  if (oneDevice || link) {
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
