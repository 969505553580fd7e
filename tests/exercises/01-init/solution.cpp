// Reference solutions of lesson 01's exercises.
#include "exercises.hpp"

#include <cctype>
#include <cstdio>

namespace ex01 {

namespace {

int attribute(CUdevice dev, CUdevice_attribute what) {
  int value = 0;
  CU_CHECK(cuDeviceGetAttribute(&value, what, dev));
  return value;
}

// nvidia-smi's form. CUuuid::bytes is char, which is signed on x86: a byte of 0x9c is -100, and
// printed as an int it would be ffffff9c. Going through unsigned char keeps it two digits.
std::string uuidText(const CUuuid& uuid) {
  std::string text = "GPU-";
  for (int i = 0; i < 16; ++i) {
    char two[3];
    std::snprintf(two, sizeof two, "%02x", static_cast<unsigned>(static_cast<unsigned char>(uuid.bytes[i])));
    text += two;
    if (i == 3 || i == 5 || i == 7 || i == 9) text += '-';
  }
  return text;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

// cuDeviceGet turns the ordinal into a handle and is the call that refuses a bad ordinal
// (CUDA_ERROR_INVALID_DEVICE): CU_CHECK throws that refusal to the caller. Every other fact is one
// call on the handle; none of them needs a context.
DeviceReport reportDevice(int ordinal) {
  CUdevice dev = 0;
  CU_CHECK(cuDeviceGet(&dev, ordinal));
  DeviceReport r;
  char name[256] = {};
  CU_CHECK(cuDeviceGetName(name, sizeof name, dev));
  r.name = name;
  CUuuid uuid = {};
  CU_CHECK(cuDeviceGetUuid(&uuid, dev));
  r.uuid = uuidText(uuid);
  char busId[32] = {};  // "0000:19:00.0" and its NUL fit in 13; the reference asks for room
  CU_CHECK(cuDeviceGetPCIBusId(busId, sizeof busId, dev));
  r.pciBusId = busId;
  r.major = attribute(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  r.minor = attribute(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  r.multiprocessors = attribute(dev, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  CU_CHECK(cuDeviceTotalMem(&r.totalMemory, dev));
  r.managedMemory = attribute(dev, CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY) == 1;
  r.concurrentManagedAccess = attribute(dev, CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS) == 1;
  return r;
}

// A compute capability is a version: compare the majors, and the minors only when the majors are
// equal. "major >= 8 && minor >= 6" would turn a 9.0 device away from a build for 8.6.
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

// cuInit(0) first: a library cannot know whether the program called it, and every other call
// before it returns CUDA_ERROR_NOT_INITIALIZED. Calling it again is harmless. The ordinals are
// those this process sees (CUDA_VISIBLE_DEVICES renumbers them from 0); the UUID is the GPU's own.
int ordinalOfUuid(const std::string& uuid) {
  CU_CHECK(cuInit(0));
  const std::string wanted = lower(uuid);  // "GPU-" and the hex digits, in either case
  int count = 0;
  CU_CHECK(cuDeviceGetCount(&count));
  for (int i = 0; i < count; ++i) {
    CUdevice dev = 0;
    CU_CHECK(cuDeviceGet(&dev, i));
    CUuuid id = {};
    CU_CHECK(cuDeviceGetUuid(&id, dev));
    if (lower(uuidText(id)) == wanted) return i;
  }
  return -1;
}

}  // namespace ex01
