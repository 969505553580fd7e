// Wrong (R3): builds the PCI bus id from the PCI_DOMAIN_ID, PCI_BUS_ID and PCI_DEVICE_ID attributes
//
// "Every other fact is an attribute, so this one is too": the three numbers are there, and printed
// as domain:bus:device.0 they look like the bus id. But they are not what cuDeviceGetPCIBusId
// writes (its digits and its case are the driver's), and they are asked of another call: the
// check's own devices answer the bus id call with ids of their own, and `r.pciBusId ==
// std::string(busId)` fails for them.
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

// cuDeviceGet turns the ordinal into a handle and is the call that refuses a bad ordinal
// (CUDA_ERROR_INVALID_DEVICE): CU_CHECK throws that refusal to the caller. Every other fact is one
// call on the handle; none of them needs a context. The name buffer is as large as the runtime's
// cudaDeviceProp::name: product names run past 50 characters.
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
  char busId[32] = {};
  std::snprintf(busId, sizeof busId, "%04x:%02x:%02x.0",
                static_cast<unsigned>(attribute(dev, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID)),
                static_cast<unsigned>(attribute(dev, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID)),
                static_cast<unsigned>(attribute(dev, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID)));
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
