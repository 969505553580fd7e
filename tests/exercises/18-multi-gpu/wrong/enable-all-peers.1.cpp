// Wrong (R2): checks every call with CU_CHECK, cuCtxEnablePeerAccess included
//
// "Every call is checked." The first call enables every pair; the second finds them enabled,
// CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED throws, and `CHECK_NOTHROW(second = ...)` fails.
// Two devices: with one there is no pair to enable.
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
      On on(contexts[i]);
      CU_CHECK(cuCtxEnablePeerAccess(contexts[j], 0));
    }
  return unsupported;
}

}  // namespace ex18
