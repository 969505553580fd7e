// Reference solution of lesson 01's exercise eligible-devices (lessons/01-init/exercises.cpp).
#include "exercises.hpp"

namespace ex01 {

namespace {

int attribute(CUdevice dev, CUdevice_attribute what) {
  int value = 0;
  CU_CHECK(cuDeviceGetAttribute(&value, what, dev));
  return value;
}

}  // namespace

// A compute capability is a version: compare the majors, and the minors only when the majors are
// equal. "major >= 8 && minor >= 6" would turn a 9.0 device away from a build for 8.6. Every device
// is looked at (one that fails says nothing about the next), and the list holds ordinals, what
// cuDeviceGet takes, not the handles it gives.
std::vector<int> eligibleDevices(const Requirements& need) {
  int count = 0;
  CU_CHECK(cuDeviceGetCount(&count));
  std::vector<int> out;
  for (int i = 0; i < count; ++i) {
    CUdevice dev = 0;
    CU_CHECK(cuDeviceGet(&dev, i));
    const int major = attribute(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
    const int minor = attribute(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    size_t memory = 0;
    CU_CHECK(cuDeviceTotalMem(&memory, dev));
    const bool newEnough = major > need.major || (major == need.major && minor >= need.minor);
    const bool managedOk =
        !need.concurrentManagedAccess || attribute(dev, CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS) == 1;
    if (newEnough && memory >= need.memoryBytes && managedOk) out.push_back(i);
  }
  return out;
}

}  // namespace ex01
