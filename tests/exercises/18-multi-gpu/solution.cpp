// Reference solutions of lesson 18's exercises.
#include "exercises.hpp"

#include <algorithm>

namespace ex18 {

namespace {

// Restores the calling thread's current context at scope exit, whatever happened in between.
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

// Enables access from `from` to the memory of `to`; already enabled is what was wanted.
void enable(CUcontext from, CUcontext to) {
  CU_CHECK(cuCtxSetCurrent(from));
  const CUresult rc = cuCtxEnablePeerAccess(to, 0);
  if (rc != CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED) CU_CHECK(rc);
}

bool canAccess(CUdevice from, CUdevice to) {
  int can = 0;
  CU_CHECK(cuDeviceCanAccessPeer(&can, from, to));
  return can == 1;
}

}  // namespace

void copyAcross(CUdeviceptr dst, CUcontext dstCtx, CUdeviceptr src, CUcontext srcCtx, std::size_t bytes,
                CUstream stream) {
  KeepCurrent keep;
  const CUdevice dstDev = deviceOf(dstCtx), srcDev = deviceOf(srcCtx);
  if (canAccess(dstDev, srcDev) && canAccess(srcDev, dstDev)) {
    enable(dstCtx, srcCtx);
    enable(srcCtx, dstCtx);
    CU_CHECK(cuMemcpyPeerAsync(dst, dstCtx, src, srcCtx, bytes, stream));  // srcCtx is current: the stream's
    return;
  }
  CU_CHECK(cuCtxSetCurrent(srcCtx));
  CU_CHECK(cuStreamSynchronize(stream));  // whatever writes the source in the stream comes first
  void* staging = nullptr;
  CU_CHECK(cuMemHostAlloc(&staging, bytes, CU_MEMHOSTALLOC_PORTABLE));
  CUresult rc = cuMemcpyDtoH(staging, src, bytes);
  if (rc == CUDA_SUCCESS) rc = cuCtxSetCurrent(dstCtx);
  if (rc == CUDA_SUCCESS) rc = cuMemcpyHtoD(dst, staging, bytes);  // pinned: returns once the copy is done
  cuMemFreeHost(staging);
  CU_CHECK(rc);
}

std::vector<PeerPair> enableAllPeers(const std::vector<CUcontext>& contexts) {
  KeepCurrent keep;
  std::vector<CUdevice> devices;
  for (CUcontext ctx : contexts) devices.push_back(deviceOf(ctx));
  std::vector<PeerPair> unsupported;
  const int n = static_cast<int>(contexts.size());
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      if (i == j) continue;
      if (canAccess(devices[i], devices[j]))
        enable(contexts[i], contexts[j]);
      else
        unsupported.push_back({i, j});
    }
  return unsupported;
}

// PORTABLE: both contexts of a copy treat the buffers as pinned, so both of its halves are DMA.
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
  KeepCurrent keep;
  CUstream down = nullptr, up = nullptr;
  CUevent downloaded[2] = {}, uploaded[2] = {};
  CU_CHECK(cuCtxSetCurrent(srcCtx));
  CU_CHECK(cuStreamCreate(&down, CU_STREAM_NON_BLOCKING));
  for (CUevent& e : downloaded) CU_CHECK(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
  CU_CHECK(cuCtxSetCurrent(dstCtx));
  CU_CHECK(cuStreamCreate(&up, CU_STREAM_NON_BLOCKING));
  for (CUevent& e : uploaded) CU_CHECK(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
  for (std::size_t offset = 0, i = 0; offset < bytes; offset += chunkBytes_, ++i) {
    const std::size_t k = i % 2, n = std::min(chunkBytes_, bytes - offset);
    CU_CHECK(cuCtxSetCurrent(srcCtx));
    if (i >= 2) CU_CHECK(cuStreamWaitEvent(down, uploaded[k], 0));  // the buffer's last copy up has read it
    CU_CHECK(cuMemcpyDtoHAsync(staging_[k], src + offset, n, down));
    CU_CHECK(cuEventRecord(downloaded[k], down));
    CU_CHECK(cuCtxSetCurrent(dstCtx));
    CU_CHECK(cuStreamWaitEvent(up, downloaded[k], 0));  // an event of the other context: allowed
    CU_CHECK(cuMemcpyHtoDAsync(dst + offset, staging_[k], n, up));
    CU_CHECK(cuEventRecord(uploaded[k], up));
  }
  CU_CHECK(cuStreamSynchronize(up));  // every copy up followed its copy down
  for (CUevent e : uploaded) CU_CHECK(cuEventDestroy(e));
  CU_CHECK(cuStreamDestroy(up));
  CU_CHECK(cuCtxSetCurrent(srcCtx));
  for (CUevent e : downloaded) CU_CHECK(cuEventDestroy(e));
  CU_CHECK(cuStreamDestroy(down));
}

}  // namespace ex18
