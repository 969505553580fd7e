// Wrong (R5): frees the staging buffer at the end of the staged path, so a failed copy leaks it
//
// "Allocate, copy down, copy up, free." When a copy fails, CU_CHECK throws past the free: every
// failed copy leaks pinned memory, which the system has little of. `held == ""` fails ("1 pinned
// host allocation more") when the check fails the copy up.
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
  {
    On on(srcCtx);
    CU_CHECK(cuStreamSynchronize(stream));  // whatever writes the source in the stream comes first
  }
  if (bytes == 0) return;
  void* staging = nullptr;
  {
    On on(srcCtx);
    CU_CHECK(cuMemHostAlloc(&staging, bytes, CU_MEMHOSTALLOC_PORTABLE));
    CU_CHECK(cuMemcpyDtoH(staging, src, bytes));
  }
  On on(dstCtx);
  CU_CHECK(cuMemcpyHtoD(dst, staging, bytes));
  CU_CHECK(cuMemFreeHost(staging));
}

}  // namespace ex18
