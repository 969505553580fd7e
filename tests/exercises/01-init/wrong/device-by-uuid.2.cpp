// Wrong (R2): compares the given text with the device's as it is, without folding the case of either
//
// nvidia-smi prints lowercase hex digits, so a UUID pasted from it is found; one written in
// uppercase, as some inventories and tools store it, is not: `ex01::ordinalOfUuid(upper(uuid)) == i`
// fails.
#include "exercises.hpp"

#include <cstdio>

namespace ex01 {

namespace {

// nvidia-smi's form, each byte through unsigned char (CUuuid::bytes is a signed char on x86).
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

int ordinalOfUuid(const std::string& uuid) {
  CU_CHECK(cuInit(0));
  int count = 0;
  CU_CHECK(cuDeviceGetCount(&count));
  for (int i = 0; i < count; ++i) {
    CUdevice dev = 0;
    CU_CHECK(cuDeviceGet(&dev, i));
    CUuuid id = {};
    CU_CHECK(cuDeviceGetUuid(&id, dev));
    if (uuidText(id) == uuid) return i;
  }
  return -1;
}

}  // namespace ex01
