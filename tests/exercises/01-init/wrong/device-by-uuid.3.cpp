// Wrong (R3): takes the first device whose UUID begins with the given text, "so a short UUID works too"
//
// A part of a UUID is a prefix of every UUID it could be, and an empty text of all of them: the
// check's first two devices differ only in their last digit, and the second's UUID cut short (and
// the empty string) give 0, so `ex01::ordinalOfUuid(part) == -1` fails.
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
    if (lower(uuidText(id)).compare(0, wanted.size(), wanted) == 0) return i;
  }
  return -1;
}

}  // namespace ex01
