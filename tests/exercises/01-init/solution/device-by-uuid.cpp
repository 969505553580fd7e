// Reference solution of lesson 01's exercise device-by-uuid (lessons/01-init/exercises.cpp).
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

// cuInit(0) first: a library cannot know whether the program called it, and every other call
// before it returns CUDA_ERROR_NOT_INITIALIZED. Calling it again is harmless. The ordinals are
// those this process sees (CUDA_VISIBLE_DEVICES renumbers them from 0); the UUID is the GPU's own.
// The whole text must be equal, ignoring case: a part of a UUID (or nothing at all) is a prefix of
// every UUID it could be, and picking one of them would be a guess.
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
