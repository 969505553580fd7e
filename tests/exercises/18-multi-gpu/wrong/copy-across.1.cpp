// Wrong (R2): never enables peer access: cuMemcpyPeerAsync copies between any two contexts anyway
//
// "cuMemcpyPeerAsync needs no peer access, so there is nothing to decide." The bytes arrive, but
// where the devices could use the link the copy does not take it (the programming guide: without
// peer access a copy between devices is staged through the host), and where a direction is refused
// nothing is staged. `accessEnabled(ctx1, ctx0)` fails, and so does `staged.openedOnWait`.
// Two devices: between two contexts of one device this is the right copy.
#include "exercises.hpp"

namespace ex18 {

namespace {

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

void copyAcross(CUdeviceptr dst, CUcontext dstCtx, CUdeviceptr src, CUcontext srcCtx, std::size_t bytes,
                CUstream stream) {
  On on(srcCtx);
  CU_CHECK(cuMemcpyPeerAsync(dst, dstCtx, src, srcCtx, bytes, stream));
}

}  // namespace ex18
