// Wrong (R4): ignores what cuMemcpyPeerAsync returns: "an enqueued copy reports its errors later"
//
// "Asynchronous calls fail at the next synchronisation, so there is nothing to check here." An
// enqueue can fail at once (a bad pointer, a size past the allocation, a context that faulted), and
// then nothing is enqueued and nothing reports it later: the caller reads a dst that never got its
// bytes. In the check, between two contexts of one device, the failed cuMemcpyPeerAsync returns
// normally, and `threwOnFailure` fails.
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

// One device: no pair to ask about, a copy within it. Two devices that can access each other both
// ways: access enabled both ways, so the copy takes the link, enqueued and not waited for. Anything
// else: staged by hand after the stream's work, and done when this returns.
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
    cuMemcpyPeerAsync(dst, dstCtx, src, srcCtx, bytes, stream);  // "errors show at the synchronisation"
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
