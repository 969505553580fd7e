// Wrong (R5): lists the devices' CUdevice handles instead of their ordinals
//
// "The list of devices" filled with what cuDeviceGet gave. On today's drivers a handle equals its
// ordinal, so it passes on a real machine. The check's own devices have handles that are not their
// ordinals: every list it returns names devices that do not exist, and `returned == expected` fails.
#include "exercises.hpp"

namespace ex01 {

namespace {

int attribute(CUdevice dev, CUdevice_attribute what) {
  int value = 0;
  CU_CHECK(cuDeviceGetAttribute(&value, what, dev));
  return value;
}

}  // namespace

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
    if (newEnough && memory >= need.memoryBytes && managedOk) out.push_back(static_cast<int>(dev));
  }
  return out;
}

}  // namespace ex01
