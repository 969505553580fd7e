// Wrong (R3): stages the copy without waiting for the work already in the stream
//
// "cuMemcpyDtoH is synchronous, so it waits for what came before." It waits for the legacy default
// stream, not for `stream` (a non-blocking stream): the copy down reads the source before the
// work behind the check's gate has written it, and `staged.arrivedAtReturn` and
// `staged.openedOnWait` fail.
// Two devices: between two contexts of one device nothing is staged.
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
  const bool link = !oneDevice && canAccess(dstDev, srcDev) && canAccess(srcDev, dstDev);
  if (link) {
    enable(dstCtx, srcCtx);
    enable(srcCtx, dstCtx);
  }
  if (oneDevice || link) {
    On on(srcCtx);  // the stream's context
    CU_CHECK(cuMemcpyPeerAsync(dst, dstCtx, src, srcCtx, bytes, stream));
    return;
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
