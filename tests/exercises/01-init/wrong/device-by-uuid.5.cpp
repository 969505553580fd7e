// Wrong (R4): returns the matching device's CUdevice handle instead of its ordinal
//
// "The device that has it" returned as what cuDeviceGet gave. On today's drivers a handle equals its
// ordinal, so it passes on a real machine; the check's own devices have handles that are not their
// ordinals, and `ex01::ordinalOfUuid(uuid) == i` fails.
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
    if (lower(uuidText(id)) == wanted) return static_cast<int>(dev);
  }
  return -1;
}

}  // namespace ex01
