// Wrong (R3): asks for more memory than the requirement, "memory > need.memoryBytes"
//
// "At least" read as "more than": a device with exactly the memory asked for is turned away. The
// cases "device 0's exact compute capability and memory" and "exactly the first device's memory"
// expect that device: `returned == expected` fails.
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
    if (newEnough && memory > need.memoryBytes && managedOk) out.push_back(i);
  }
  return out;
}

}  // namespace ex01
