// Wrong (R1): takes contexts[i] to be device i's context (cuDeviceGet(&dev, i))
//
// "The caller passes one context per device, in order." Nothing says so: the check passes them in
// reverse order, so the pairs asked about are not the contexts' devices, the refused direction is
// reported for the wrong pair and enabled for the right one. `first == unsupported` fails.
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

}  // namespace

std::vector<PeerPair> enableAllPeers(const std::vector<CUcontext>& contexts) {
  std::vector<CUdevice> devices;
  for (size_t i = 0; i < contexts.size(); ++i) {
    CUdevice dev = 0;
    CU_CHECK(cuDeviceGet(&dev, static_cast<int>(i)));
    devices.push_back(dev);
  }
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
