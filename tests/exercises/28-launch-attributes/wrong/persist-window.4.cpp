// Wrong (R3): hitRatio 1 whatever the sizes
//
// With a window larger than the set-aside, every line is marked persisting and they evict each other
// in the set-aside: the guide's advice is a ratio of set-aside to window.
#include "exercises.hpp"

#include <algorithm>

namespace ex28 {

// The set-aside first (the window's hitRatio depends on what the context reports), both clamped to
// what the device allows.
size_t persistHot(CUstream stream, CUdeviceptr hot, size_t bytes) {
  CUdevice dev = 0;
  CU_CHECK(cuCtxGetDevice(&dev));
  int maxPersisting = 0, maxWindow = 0;
  CU_CHECK(cuDeviceGetAttribute(&maxPersisting, CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE, dev));
  CU_CHECK(cuDeviceGetAttribute(&maxWindow, CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE, dev));
  CU_CHECK(cuCtxSetLimit(CU_LIMIT_PERSISTING_L2_CACHE_SIZE, std::min(bytes, static_cast<size_t>(maxPersisting))));
  size_t setAside = 0;
  CU_CHECK(cuCtxGetLimit(&setAside, CU_LIMIT_PERSISTING_L2_CACHE_SIZE));
  CUstreamAttrValue v{};
  v.accessPolicyWindow.base_ptr = reinterpret_cast<void*>(hot);
  v.accessPolicyWindow.num_bytes = std::min(bytes, static_cast<size_t>(maxWindow));
  v.accessPolicyWindow.hitRatio = 1.0f;
  v.accessPolicyWindow.hitProp = CU_ACCESS_PROPERTY_PERSISTING;
  v.accessPolicyWindow.missProp = CU_ACCESS_PROPERTY_STREAMING;
  CU_CHECK(cuStreamSetAttribute(stream, CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW, &v));
  return setAside;
}

}  // namespace ex28
