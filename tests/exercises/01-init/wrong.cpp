// Deliberately wrong variants of lesson 01's exercises: each check must fail on them.
#include "exercises.hpp"

#include <cctype>
#include <iomanip>
#include <sstream>

namespace ex01 {

namespace {

int attribute(CUdevice dev, CUdevice_attribute what) {
  int value = 0;
  CU_CHECK(cuDeviceGetAttribute(&value, what, dev));
  return value;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string uuidText(const CUuuid& uuid) {
  std::ostringstream text;
  text << "GPU-" << std::hex << std::setfill('0');
  for (int i = 0; i < 16; ++i) {
    text << std::setw(2) << static_cast<unsigned>(static_cast<unsigned char>(uuid.bytes[i]));
    if (i == 3 || i == 5 || i == 7 || i == 9) text << '-';
  }
  return text.str();
}

}  // namespace

// Wrong: prints each UUID byte as static_cast<int>(uuid.bytes[i]). CUuuid::bytes is char, signed on
// x86, so every byte from 0x80 up prints as eight digits (0x9c as ffffff9c). A random 16-byte UUID
// has such a byte with near certainty (all below 0x80: 1 in 65536), and the check's
// `uuidBytes(reported, bytes)` (nvidia-smi's form) and `reported == expected` fail.
DeviceReport reportDevice(int ordinal) {
  CUdevice dev = 0;
  CU_CHECK(cuDeviceGet(&dev, ordinal));
  DeviceReport r;
  char name[256] = {};
  CU_CHECK(cuDeviceGetName(name, sizeof name, dev));
  r.name = name;
  CUuuid uuid = {};
  CU_CHECK(cuDeviceGetUuid(&uuid, dev));
  std::ostringstream text;
  text << "GPU-" << std::hex << std::setfill('0');
  for (int i = 0; i < 16; ++i) {
    text << std::setw(2) << static_cast<int>(uuid.bytes[i]);
    if (i == 3 || i == 5 || i == 7 || i == 9) text << '-';
  }
  r.uuid = text.str();
  char busId[32] = {};
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

// Wrong: compares the compute capability part by part, "major >= need.major && minor >= need.minor".
// A device of m.n fails a requirement of (m-1).(n+1) although it is newer: the check's case "an
// older major version with a higher minor" expects device 0 in the list, and `returned == expected`
// fails.
std::vector<int> eligibleDevices(const Requirements& need) {
  int count = 0;
  CU_CHECK(cuDeviceGetCount(&count));
  std::vector<int> out;
  for (int i = 0; i < count; ++i) {
    CUdevice dev = 0;
    CU_CHECK(cuDeviceGet(&dev, i));
    size_t memory = 0;
    CU_CHECK(cuDeviceTotalMem(&memory, dev));
    const bool newEnough = attribute(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) >= need.major &&
                           attribute(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR) >= need.minor;
    const bool managedOk =
        !need.concurrentManagedAccess || attribute(dev, CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS) == 1;
    if (newEnough && memory >= need.memoryBytes && managedOk) out.push_back(i);
  }
  return out;
}

// Wrong: no cuInit(0), "main() calls it". In a process where nothing did, its first CU_CHECK
// (cuDeviceGetCount) throws CUDA_ERROR_NOT_INITIALIZED: the child's case fails and exits 1, and the
// check's `end.code == 0` fails.
int ordinalOfUuid(const std::string& uuid) {
  const std::string wanted = lower(uuid);
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
