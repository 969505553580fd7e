// Wrong (R2): formats each UUID byte as static_cast<int>(id.bytes[i]), so a byte from 0x80 up is sign-extended
//
// CUuuid::bytes is char, signed on x86: 0x9c becomes -100, printed ffffff9c and cut by the
// three-character buffer to ff. The text no longer is the device's UUID, so the device is not found:
// the check's own devices have bytes 0x9c and 0x80, and `ex01::ordinalOfUuid(uuid) == i` fails.
#include "exercises.hpp"

#include <cctype>
#include <cstdio>

namespace ex01 {

namespace {

// nvidia-smi's form, each byte through unsigned char (CUuuid::bytes is a signed char on x86).
std::string uuidText(const CUuuid& uuid) {
  std::string text = "GPU-";
  for (int i = 0; i < 16; ++i) {
    char two[3];
    std::snprintf(two, sizeof two, "%02x", static_cast<int>(uuid.bytes[i]));
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

int ordinalOfUuid(const std::string& uuid) {
  CU_CHECK(cuInit(0));
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
