// Wrong (R3): compares as many characters as the device's UUID has, with strncasecmp
//
// "strncasecmp ignores the case and never reads too far": it compares the first 40 characters, so
// any text that begins with a device's UUID names it, a UUID with a digit more or a line with text
// after it included. On the check's own devices the second UUID with a "0" after it gives 1:
// `ex01::ordinalOfUuid(part) == -1` fails.
#include "exercises.hpp"

#include <strings.h>

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

// cuInit(0) first: a library cannot know whether the program called it, and every other call
// before it returns CUDA_ERROR_NOT_INITIALIZED. Calling it again is harmless. The ordinals are
// those this process sees (CUDA_VISIBLE_DEVICES renumbers them from 0); the UUID is the GPU's own.
// The whole text must be equal, ignoring case: a part of a UUID (or nothing at all) is a prefix of
// every UUID it could be, and picking one of them would be a guess.
int ordinalOfUuid(const std::string& uuid) {
  CU_CHECK(cuInit(0));
  int count = 0;
  CU_CHECK(cuDeviceGetCount(&count));
  for (int i = 0; i < count; ++i) {
    CUdevice dev = 0;
    CU_CHECK(cuDeviceGet(&dev, i));
    CUuuid id = {};
    CU_CHECK(cuDeviceGetUuid(&id, dev));
    const std::string mine = uuidText(id);
    if (strncasecmp(uuid.c_str(), mine.c_str(), mine.size()) == 0) return i;
  }
  return -1;
}

}  // namespace ex01
