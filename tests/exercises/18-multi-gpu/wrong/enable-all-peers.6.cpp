// Wrong (R5): pushes contexts[i] around each enable and pops it after CU_CHECK
//
// "Push, enable, check, pop." When the enable fails, CU_CHECK throws before the pop, and the
// caller's thread is left with contexts[i] pushed on its stack. `wbx::contextStack() == stackBefore`
// fails after the check's CUDA_ERROR_TOO_MANY_PEERS.
// Two devices: with one context no enable is called.
#include "exercises.hpp"

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

CUdevice deviceOf(CUcontext ctx) {
  On on(ctx);
  CUdevice dev = 0;
  CU_CHECK(cuCtxGetDevice(&dev));
  return dev;
}

}  // namespace

std::vector<PeerPair> enableAllPeers(const std::vector<CUcontext>& contexts) {
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
      CU_CHECK(cuCtxPushCurrent(contexts[i]));
      const CUresult rc = cuCtxEnablePeerAccess(contexts[j], 0);
      if (rc != CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED) CU_CHECK(rc);
      CUcontext popped = nullptr;
      CU_CHECK(cuCtxPopCurrent(&popped));
    }
  return unsupported;
}

}  // namespace ex18
