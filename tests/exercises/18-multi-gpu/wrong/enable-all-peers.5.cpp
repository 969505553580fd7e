// Wrong (R5): finds each context's device by making it current with cuCtxSetCurrent, and leaves it so
//
// "cuCtxGetDevice answers for the current context, so set it." cuCtxSetCurrent replaces the top of
// the caller's stack, and nothing restores it: after the call the last context asked about is
// current. `wbx::contextStack() == stackBefore` fails (with one context, on any machine).
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
  CU_CHECK(cuCtxSetCurrent(ctx));
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
      On on(contexts[i]);
      const CUresult rc = cuCtxEnablePeerAccess(contexts[j], 0);
      if (rc != CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED) CU_CHECK(rc);
    }
  return unsupported;
}

}  // namespace ex18
