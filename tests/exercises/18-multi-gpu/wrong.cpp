// Deliberately wrong variants of lesson 18's exercises: each check must fail on them.
#include "exercises.hpp"

#include <algorithm>

namespace ex18 {

namespace {

class KeepCurrent {
 public:
  KeepCurrent() { CU_CHECK(cuCtxGetCurrent(&was_)); }
  ~KeepCurrent() { cuCtxSetCurrent(was_); }
  KeepCurrent(const KeepCurrent&) = delete;
  KeepCurrent& operator=(const KeepCurrent&) = delete;

 private:
  CUcontext was_ = nullptr;
};

CUdevice deviceOf(CUcontext ctx) {
  CU_CHECK(cuCtxSetCurrent(ctx));
  CUdevice dev = 0;
  CU_CHECK(cuCtxGetDevice(&dev));
  return dev;
}

}  // namespace

// Wrong: "cuMemcpyPeerAsync copies between any two contexts, peer access or not, so there is nothing
// to decide": the bytes arrive both ways in stream order and the current context is kept, but no
// peer access is ever enabled, so where the devices could use the link the copy does not take it:
// `accessEnabled(ctx1, ctx0)` and `accessEnabled(ctx0, ctx1)` fail (the programming guide: a
// copy between devices without peer access enabled is staged through the host).
void copyAcross(CUdeviceptr dst, CUcontext dstCtx, CUdeviceptr src, CUcontext srcCtx, std::size_t bytes,
                CUstream stream) {
  KeepCurrent keep;
  CU_CHECK(cuCtxSetCurrent(srcCtx));
  CU_CHECK(cuMemcpyPeerAsync(dst, dstCtx, src, srcCtx, bytes, stream));
}

// Wrong: "every call is checked": CU_CHECK around cuCtxEnablePeerAccess. The first call enables
// every pair; the second finds them enabled, CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED throws, and
// `CHECK_NOTHROW(second = ex18::enableAllPeers(all.contexts))` fails.
std::vector<PeerPair> enableAllPeers(const std::vector<CUcontext>& contexts) {
  KeepCurrent keep;
  std::vector<CUdevice> devices;
  for (CUcontext ctx : contexts) devices.push_back(deviceOf(ctx));
  std::vector<PeerPair> unsupported;
  const int n = static_cast<int>(contexts.size());
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      if (i == j) continue;
      int can = 0;
      CU_CHECK(cuDeviceCanAccessPeer(&can, devices[i], devices[j]));
      if (!can) {
        unsupported.push_back({i, j});
        continue;
      }
      CU_CHECK(cuCtxSetCurrent(contexts[i]));
      CU_CHECK(cuCtxEnablePeerAccess(contexts[j], 0));
    }
  return unsupported;
}

StagedCopier::StagedCopier(std::size_t chunkBytes) : chunkBytes_(chunkBytes) {
  for (void*& buffer : staging_) CU_CHECK(cuMemHostAlloc(&buffer, chunkBytes, CU_MEMHOSTALLOC_PORTABLE));
}

StagedCopier::~StagedCopier() {
  for (void* buffer : staging_)
    if (buffer) cuMemFreeHost(buffer);
}

// Wrong: "one staging buffer is enough: each chunk's copy down waits for the copy up that read the
// buffer, so nothing is overwritten". Every byte arrives, but each chunk now waits for the one
// before it to have gone all the way up: down and up never overlap, the copy takes as long as
// copying down whole and then up whole, and `copierMs <= 0.8 * plainMs` fails.
void StagedCopier::copy(CUdeviceptr dst, CUcontext dstCtx, CUdeviceptr src, CUcontext srcCtx, std::size_t bytes) {
  KeepCurrent keep;
  CUstream down = nullptr, up = nullptr;
  CUevent downloaded = nullptr, uploaded = nullptr;
  CU_CHECK(cuCtxSetCurrent(srcCtx));
  CU_CHECK(cuStreamCreate(&down, CU_STREAM_NON_BLOCKING));
  CU_CHECK(cuEventCreate(&downloaded, CU_EVENT_DISABLE_TIMING));
  CU_CHECK(cuCtxSetCurrent(dstCtx));
  CU_CHECK(cuStreamCreate(&up, CU_STREAM_NON_BLOCKING));
  CU_CHECK(cuEventCreate(&uploaded, CU_EVENT_DISABLE_TIMING));
  for (std::size_t offset = 0, i = 0; offset < bytes; offset += chunkBytes_, ++i) {
    const std::size_t n = std::min(chunkBytes_, bytes - offset);
    CU_CHECK(cuCtxSetCurrent(srcCtx));
    if (i >= 1) CU_CHECK(cuStreamWaitEvent(down, uploaded, 0));
    CU_CHECK(cuMemcpyDtoHAsync(staging_[0], src + offset, n, down));
    CU_CHECK(cuEventRecord(downloaded, down));
    CU_CHECK(cuCtxSetCurrent(dstCtx));
    CU_CHECK(cuStreamWaitEvent(up, downloaded, 0));
    CU_CHECK(cuMemcpyHtoDAsync(dst + offset, staging_[0], n, up));
    CU_CHECK(cuEventRecord(uploaded, up));
  }
  CU_CHECK(cuStreamSynchronize(up));
  CU_CHECK(cuEventDestroy(uploaded));
  CU_CHECK(cuStreamDestroy(up));
  CU_CHECK(cuCtxSetCurrent(srcCtx));
  CU_CHECK(cuEventDestroy(downloaded));
  CU_CHECK(cuStreamDestroy(down));
}

}  // namespace ex18
