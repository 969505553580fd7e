// Wrong (R5): uses the ordinal as the CUdevice and never calls cuDeviceGet, "a device handle is its ordinal"
//
// On today's drivers the handle of ordinal k happens to be k, so it passes on every machine. The
// check's own devices have handles that are not their ordinals: the calls on the ordinal answer for
// this machine's GPU 0, and `reportedName == expectedName` and the other fields fail.
#include "exercises.hpp"

#include <cstdio>

namespace ex01 {

namespace {

int attribute(CUdevice dev, CUdevice_attribute what) {
  int value = 0;
  CU_CHECK(cuDeviceGetAttribute(&value, what, dev));
  return value;
}

// nvidia-smi's form. CUuuid::bytes is char, which is signed on x86: a byte of 0x9c is -100, and
// printed as an int it would be ffffff9c. Going through unsigned char keeps it two digits, and %02x
// keeps a byte below 0x10 two digits too.
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

}  // namespace

DeviceReport reportDevice(int ordinal) {
  const CUdevice dev = ordinal;
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

}  // namespace ex01
