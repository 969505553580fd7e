// Wrong (R4): judges concurrent managed access by CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY
//
// "Managed memory is managed memory": every H100 and H200 under Linux has both, so it passes there.
// The check's own first device has managed memory without concurrent access (as under Windows):
// for "concurrent managed access" it is listed, and `returned == expected` fails.
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
        !need.concurrentManagedAccess || attribute(dev, CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY) == 1;
    if (newEnough && memory >= need.memoryBytes && managedOk) out.push_back(i);
  }
  return out;
}

}  // namespace ex01
