// Lesson 01: cuInit and what it unlocks.
//
// What you learn: the Driver API does nothing until cuInit(0) succeeds (the reference: before it,
// any call returns CUDA_ERROR_NOT_INITIALIZED); cuDriverGetVersion, whose documented errors do not
// include that one, answered before it on driver 580; cuInit rejects any flag but 0; then, for every device: its name,
// UUID, compute capability, memory, multiprocessor count, and the attributes the later lessons
// depend on (unified addressing, managed memory, concurrent managed access, mapping host memory).
//
// APIs: cuDriverGetVersion, cuInit, cuDeviceGetCount, cuDeviceGet, cuDeviceGetName,
//       cuDeviceGetUuid, cuDeviceTotalMem, cuDeviceGetAttribute, cuDeviceGetPCIBusId
// Run:  ctest -R lesson01   (or build/lessons/lesson01-init)
#include "workbook.hpp"

#include <cstdio>
#include <string>

//! [driver-version]
// Which CUDA version the installed driver supports. Its documented errors do not include
// CUDA_ERROR_NOT_INITIALIZED, and on driver 580 it answered before cuInit.
int driverVersion() {
  int version = 0;
  CU_CHECK(cuDriverGetVersion(&version));
  std::printf("The driver supports CUDA %d.%d; this program was built with CUDA %d.%d.\n", version / 1000,
              version % 1000 / 10, CUDA_VERSION / 1000, CUDA_VERSION % 1000 / 10);
  // Reaching this line already proves the driver has every versioned symbol this program imports
  // (cuCtxCreate_v4, cuMemAlloc_v2, ...): an older libcuda stops the program at load time, before
  // main, with no CUresult at all. Lesson 12 shows how a program that must start anyway looks the
  // calls up at run time with cuGetProcAddress.
  if (version < CUDA_VERSION)
    std::printf("  The driver is older than the toolkit: features newer than CUDA %d.%d are not there.\n",
                version / 1000, version % 1000 / 10);
  return version;
}
//! [driver-version]

//! [before-init]
// Before cuInit every other call is refused. The result is inspected, not thrown: it is the point.
void callBeforeInit() {
  int count = -1;
  const CUresult rc = cuDeviceGetCount(&count);
  std::printf("cuDeviceGetCount before cuInit returned %s (%d); count is still %d.\n",
              wb::errorName(rc).c_str(), static_cast<int>(rc), count);
}
//! [before-init]

//! [init]
// cuInit takes a flags word that must be 0; anything else is CUDA_ERROR_INVALID_VALUE and leaves
// the driver uninitialised. cuInit(0) then initialises it for the whole process, once.
void initialise() {
  const CUresult rejected = cuInit(1);
  std::printf("cuInit(1) returned %s (%d): flags must be 0.\n", wb::errorName(rejected).c_str(),
              static_cast<int>(rejected));
  CU_CHECK(cuInit(0));
  std::printf("cuInit(0) succeeded.\n");
}
//! [init]

int attribute(CUdevice dev, CUdevice_attribute attr) {
  int value = 0;
  CU_CHECK(cuDeviceGetAttribute(&value, attr, dev));
  return value;
}

const char* yesNo(int v) { return v ? "yes" : "no"; }

std::string uuidText(const CUuuid& uuid) {
  std::string text = "GPU-";
  char buf[3];
  for (int i = 0; i < 16; ++i) {
    std::snprintf(buf, sizeof buf, "%02x", static_cast<unsigned char>(uuid.bytes[i]));
    text += buf;
    if (i == 3 || i == 5 || i == 7 || i == 9) text += '-';
  }
  return text;
}

//! [describe-device]
// One device, by ordinal. A CUdevice is just an ordinal's handle: no context, no memory yet.
void describeDevice(int ordinal) {
  CUdevice dev = 0;
  CU_CHECK(cuDeviceGet(&dev, ordinal));
  char name[256] = {};
  CU_CHECK(cuDeviceGetName(name, sizeof name, dev));
  CUuuid uuid = {};
  CU_CHECK(cuDeviceGetUuid(&uuid, dev));
  char busId[32] = {};
  CU_CHECK(cuDeviceGetPCIBusId(busId, sizeof busId, dev));
  size_t total = 0;
  CU_CHECK(cuDeviceTotalMem(&total, dev));

  std::printf("Device %d: %s\n", ordinal, name);
  std::printf("  UUID %s, PCI bus %s\n", uuidText(uuid).c_str(), busId);
  std::printf("  compute capability %d.%d, %d multiprocessors, %s of memory\n",
              attribute(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
              attribute(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR),
              attribute(dev, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT), wb::bytes(total).c_str());
  // The attributes later lessons stand on:
  std::printf("  unified addressing (one address space for host and all devices): %s\n",
              yesNo(attribute(dev, CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING)));
  std::printf("  managed memory (__managed__, cuMemAllocManaged):                %s\n",
              yesNo(attribute(dev, CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY)));
  std::printf("  concurrent managed access (host may touch it while kernels run): %s\n",
              yesNo(attribute(dev, CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS)));
  std::printf("  can map host memory (pinned host memory seen by kernels):       %s\n",
              yesNo(attribute(dev, CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY)));
}
//! [describe-device]

//! [invalid-ordinal]
// Ordinals run from 0 to count-1; one past the end is CUDA_ERROR_INVALID_DEVICE.
void askForMissingDevice(int count) {
  CUdevice dev = 0;
  const CUresult rc = cuDeviceGet(&dev, count);
  std::printf("cuDeviceGet(ordinal %d) returned %s (%d): there are only %d.\n", count,
              wb::errorName(rc).c_str(), static_cast<int>(rc), count);
}
//! [invalid-ordinal]

int main() {
  try {
    wb::checkEnvironment({});  // no variable changes what this lesson shows (device choice and the driver's log are noted)
    wb::step(1, "The driver's version");
    driverVersion();
    wb::step(2, "Every other call waits for cuInit");
    callBeforeInit();
    initialise();
    wb::step(3, "What each device is and can do");
    int count = 0;
    CU_CHECK(cuDeviceGetCount(&count));
    std::printf("The driver sees %d CUDA device%s.\n", count, count == 1 ? "" : "s");
    for (int i = 0; i < count; ++i) describeDevice(i);
    wb::step(4, "An ordinal that does not exist");
    askForMissingDevice(count);
    return wb::kExitOk;
  } catch (...) {
    return wb::reportFatal(std::current_exception());
  }
}
