// Wrong (R2): compares the compute capability part by part, "major >= need.major && minor >= need.minor"
//
// A device of m.n fails a requirement of (m-1).(n+1) although it is newer: on this machine the
// case "an older major version with a higher minor" expects device 0, and on the check's own
// devices 12.0 is turned away from 8.6 and 7.9; `returned == expected` fails.
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
    const bool newEnough = major >= need.major && minor >= need.minor;
    const bool managedOk =
        !need.concurrentManagedAccess || attribute(dev, CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS) == 1;
    if (newEnough && memory >= need.memoryBytes && managedOk) out.push_back(i);
  }
  return out;
}

}  // namespace ex01
