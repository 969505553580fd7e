// Wrong (R4): asks for concurrent managed access to be exactly what need says, "the flag must match"
//
// need.concurrentManagedAccess false is read as "a device without it", so a device that has it
// is turned away from a server that does not need it. Every H100 and H200 under Linux has it: on
// this machine "nothing at all" lists no device, and on the check's own devices the 12.0 device is
// left out; `returned == expected` fails.
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
        (attribute(dev, CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS) == 1) == need.concurrentManagedAccess;
    if (newEnough && memory >= need.memoryBytes && managedOk) out.push_back(i);
  }
  return out;
}

}  // namespace ex01
