// Wrong (R3): ignores whatever cuCtxEnablePeerAccess answers, so that a second call never throws
//
// "Enabling is best effort: already enabled, or whatever, the set-up goes on." A device out of peer
// slots (CUDA_ERROR_TOO_MANY_PEERS) then goes unreported, and the service later runs its copies
// through the host without knowing why. `threwOnFailure` fails.
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
      cuCtxEnablePeerAccess(contexts[j], 0);
    }
  return unsupported;
}

}  // namespace ex18
