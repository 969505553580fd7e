// Wrong (R4): returns the refused pairs as device ordinals, not as indexes into contexts
//
// "The pairs that cannot talk are pairs of GPUs", so it reports the devices it asked about. The
// caller holds contexts, in an order of its own, and looks the pair up there: where contexts[i] is
// not device i, it finds the wrong pair. The check passes the contexts in reverse order of their
// devices and refuses the last device's access to device 0: that is the pair (0, last) of indexes,
// reported here as (last, 0), and `first == unsupported` fails.
// Two devices: with one context there is no pair.
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

// Each direction is asked for and enabled on its own: access from i to j says nothing of j to i.
// "Already enabled" is the state this function exists to reach; every other error is the caller's
// to hear, CUDA_ERROR_TOO_MANY_PEERS first of all.
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
        unsupported.push_back({static_cast<int>(devices[i]), static_cast<int>(devices[j])});
        continue;
      }
      On on(contexts[i]);
      const CUresult rc = cuCtxEnablePeerAccess(contexts[j], 0);
      if (rc != CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED) CU_CHECK(rc);
    }
  return unsupported;
}

}  // namespace ex18
