// Wrong (R1): no cuInit(0), "main() calls it"
//
// In a process where nothing did, its first CU_CHECK (cuDeviceGetCount) throws
// CUDA_ERROR_NOT_INITIALIZED: the child's case fails and exits 1, and the check's `end.code == 0`
// fails. (In the check's own process, where cuInit ran, it gives the right answers.)
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
