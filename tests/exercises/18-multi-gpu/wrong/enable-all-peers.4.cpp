// Wrong (R1): asks each pair once and treats access as symmetric
//
// "If i can access j, j can access i." The reference asks per direction, and so does the check:
// with only the direction from the last device to device 0 refused, this reports both directions
// of that pair and enables neither, and `first == unsupported` and `notEnabled == 0` fail.
// Two devices: with one context there is no pair.
#include "exercises.hpp"

#include <utility>

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
  std::vector<std::vector<bool>> cannot(n, std::vector<bool>(n, false));
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j) {
      int can = 0;
      CU_CHECK(cuDeviceCanAccessPeer(&can, devices[i], devices[j]));
      if (!can) {
        cannot[i][j] = cannot[j][i] = true;
        continue;
      }
      for (const auto& [from, to] : {std::pair<int, int>{i, j}, std::pair<int, int>{j, i}}) {
        On on(contexts[from]);
        const CUresult rc = cuCtxEnablePeerAccess(contexts[to], 0);
        if (rc != CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED) CU_CHECK(rc);
      }
    }
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      if (cannot[i][j]) unsupported.push_back({i, j});
  return unsupported;
}

}  // namespace ex18
