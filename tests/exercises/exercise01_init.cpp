// The checks of lesson 01's exercises (lessons/01-init/exercises.cpp). What a device is comes from
// the driver in the same run: nothing here knows which GPU it runs on. One or two GPUs of one kind
// hide many mistakes (a UUID whose bytes all print alike, a short name, every device with concurrent
// managed access, a handle equal to its ordinal), so each check also runs on devices of its own: while
// a Fleet lives, the seven device calls lesson 01 teaches answer for the fleet instead of the machine.
// Each case's name begins with the requirements it verifies.
#include "check.hpp"
#include "01-init/exercises.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

// A device as the fleet presents it.
struct FakeDevice {
  const char* name;
  unsigned char uuid[16];
  const char* busId;
  int major, minor, multiprocessors;
  size_t memory;
  int managed, concurrentManaged;
};

// Three devices unlike this machine's GPUs: a UUID with bytes below 0x10 and from 0x80 up, two
// UUIDs that differ only in their last digit, a name of 55 characters, a two-digit major version,
// memory past 32 bits, managed memory without concurrent managed access (as under Windows), and
// neither (as on a vGPU whose unified memory is not enabled).
constexpr int kFleetSize = 3;
const FakeDevice kFleet[kFleetSize] = {
    {"NVIDIA GeForce RTX 3090",
     {0x00, 0x0a, 0x9c, 0xff, 0x10, 0x7f, 0x80, 0x01, 0xab, 0xcd, 0xef, 0x0f, 0x5e, 0xa1, 0x08, 0x3c},
     "0000:0A:00.0", 8, 6, 82, 25438126080ull, 1, 0},
    {"NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition",
     {0x00, 0x0a, 0x9c, 0xff, 0x10, 0x7f, 0x80, 0x01, 0xab, 0xcd, 0xef, 0x0f, 0x5e, 0xa1, 0x08, 0x3d},
     "0000:41:00.0", 12, 0, 188, 102005473280ull, 1, 1},
    {"GRID T4-16Q",
     {0xf3, 0x2e, 0x05, 0xb7, 0xc4, 0x91, 0x4d, 0x06, 0x8a, 0x0c, 0xe9, 0x73, 0x2b, 0xd0, 0x6f, 0x94},
     "0000:AF:00.0", 7, 5, 40, 16106127360ull, 0, 0},
};
// The fleet's handles: nothing promises that a CUdevice equals its ordinal, and here none does.
constexpr CUdevice kFirstHandle = 0x5100;

bool gFleetStands = false;

// While it lives, lesson 01's device calls answer for kFleet instead of this machine's GPUs.
struct Fleet {
  Fleet() { gFleetStands = true; }
  ~Fleet() { gFleetStands = false; }
  Fleet(const Fleet&) = delete;
  Fleet& operator=(const Fleet&) = delete;
};

const FakeDevice* fakeOf(CUdevice dev) {
  const int k = dev - kFirstHandle;
  return gFleetStands && k >= 0 && k < kFleetSize ? &kFleet[k] : nullptr;
}

template <typename Fn>
Fn realOf(const char* symbol) {
  return reinterpret_cast<Fn>(wbx::detail::real(symbol));
}

// The fleet answers only where the driver would answer at all: before cuInit it refuses as the
// driver does.
CUresult driverState() {
  static const auto real = realOf<CUresult(CUDAAPI*)(int*)>("cuDeviceGetCount");
  int count = 0;
  return real ? real(&count) : CUDA_ERROR_NOT_FOUND;
}

// Copies text as the driver's string calls do: at most len - 1 characters and a NUL.
CUresult copyText(char* to, int len, const char* text) {
  if (!to || len <= 0) return CUDA_ERROR_INVALID_VALUE;
  const size_t n = std::min(std::strlen(text), static_cast<size_t>(len - 1));
  std::memcpy(to, text, n);
  to[n] = '\0';
  return CUDA_SUCCESS;
}

CUresult fakeUuid(CUuuid* uuid, const FakeDevice& d) {
  if (!uuid) return CUDA_ERROR_INVALID_VALUE;
  std::memcpy(uuid->bytes, d.uuid, sizeof d.uuid);
  return CUDA_SUCCESS;
}

}  // namespace

// Declares real, the driver's own entry point (by its versioned symbol), in an entry point below.
#define EX01_REAL(name, type)                                                      \
  static const auto real = realOf<CUresult(CUDAAPI*) type>(WBX_STRING(name));    \
  if (!real) return CUDA_ERROR_NOT_FOUND

extern "C" CUresult CUDAAPI cuDeviceGetCount(int* count) {
  EX01_REAL(cuDeviceGetCount, (int*));
  if (!gFleetStands) return real(count);
  if (const CUresult rc = real(count)) return rc;
  *count = kFleetSize;
  return CUDA_SUCCESS;
}

extern "C" CUresult CUDAAPI cuDeviceGet(CUdevice* dev, int ordinal) {
  EX01_REAL(cuDeviceGet, (CUdevice*, int));
  if (!gFleetStands) return real(dev, ordinal);
  if (const CUresult rc = driverState()) return rc;
  if (ordinal < 0 || ordinal >= kFleetSize) return CUDA_ERROR_INVALID_DEVICE;
  *dev = kFirstHandle + ordinal;
  return CUDA_SUCCESS;
}

extern "C" CUresult CUDAAPI cuDeviceGetName(char* name, int len, CUdevice dev) {
  EX01_REAL(cuDeviceGetName, (char*, int, CUdevice));
  const FakeDevice* d = fakeOf(dev);
  return d ? copyText(name, len, d->name) : real(name, len, dev);
}

extern "C" CUresult CUDAAPI cuDeviceGetPCIBusId(char* busId, int len, CUdevice dev) {
  EX01_REAL(cuDeviceGetPCIBusId, (char*, int, CUdevice));
  const FakeDevice* d = fakeOf(dev);
  return d ? copyText(busId, len, d->busId) : real(busId, len, dev);
}

// cuda.h names the versioned symbols (cuDeviceTotalMem_v2, and cuDeviceGetUuid_v2 from 13.0).
extern "C" CUresult CUDAAPI cuDeviceTotalMem(size_t* bytes, CUdevice dev) {
  EX01_REAL(cuDeviceTotalMem, (size_t*, CUdevice));
  const FakeDevice* d = fakeOf(dev);
  if (!d) return real(bytes, dev);
  *bytes = d->memory;
  return CUDA_SUCCESS;
}

extern "C" CUresult CUDAAPI cuDeviceGetUuid(CUuuid* uuid, CUdevice dev) {
  EX01_REAL(cuDeviceGetUuid, (CUuuid*, CUdevice));
  const FakeDevice* d = fakeOf(dev);
  return d ? fakeUuid(uuid, *d) : real(uuid, dev);
}

#if CUDA_VERSION < 13000
// Up to 12.x cuda.h declares both, and cuDeviceGetUuid is the first version.
extern "C" CUresult CUDAAPI cuDeviceGetUuid_v2(CUuuid* uuid, CUdevice dev) {
  EX01_REAL(cuDeviceGetUuid_v2, (CUuuid*, CUdevice));
  const FakeDevice* d = fakeOf(dev);
  return d ? fakeUuid(uuid, *d) : real(uuid, dev);
}
#endif

// The five attributes a fleet device has; any other is device 0's, which no fleet value equals.
extern "C" CUresult CUDAAPI cuDeviceGetAttribute(int* value, CUdevice_attribute attribute, CUdevice dev) {
  EX01_REAL(cuDeviceGetAttribute, (int*, CUdevice_attribute, CUdevice));
  const FakeDevice* d = fakeOf(dev);
  if (!d) return real(value, attribute, dev);
  switch (attribute) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *value = d->major; return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *value = d->minor; return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *value = d->multiprocessors; return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY: *value = d->managed; return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS: *value = d->concurrentManaged; return CUDA_SUCCESS;
    default: {
      static const auto realGet = realOf<CUresult(CUDAAPI*)(CUdevice*, int)>("cuDeviceGet");
      CUdevice first = 0;
      if (!realGet) return CUDA_ERROR_NOT_FOUND;
      if (const CUresult rc = realGet(&first, 0)) return rc;
      return real(value, attribute, first);
    }
  }
}

namespace {

// A UUID as nvidia-smi -L prints it: GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx, lowercase.
std::string uuidText(CUdevice dev) {
  CUuuid uuid = {};
  CU_CHECK(cuDeviceGetUuid(&uuid, dev));
  std::string text = "GPU-";
  for (int i = 0; i < 16; ++i) {
    char two[3];
    std::snprintf(two, sizeof two, "%02x", static_cast<unsigned>(static_cast<unsigned char>(uuid.bytes[i])));
    text += two;
    if (i == 3 || i == 5 || i == 7 || i == 9) text += '-';
  }
  return text;
}

// The 16 bytes a text in that form stands for; false when it is not in that form.
bool uuidBytes(const std::string& text, std::string& bytes) {
  static const int dashAt[] = {12, 17, 22, 27};
  if (text.size() != 40 || text.compare(0, 4, "GPU-") != 0) return false;
  std::string hex;
  for (size_t i = 4; i < text.size(); ++i) {
    if (std::find(std::begin(dashAt), std::end(dashAt), static_cast<int>(i)) != std::end(dashAt)) {
      if (text[i] != '-') return false;
      continue;
    }
    if (!std::isxdigit(static_cast<unsigned char>(text[i]))) return false;
    hex += text[i];
  }
  bytes.clear();
  for (size_t i = 0; i < hex.size(); i += 2) bytes += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  return true;
}

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// Upper case in the first half, lower in the second: "letters in either case" is per letter.
std::string mixed(std::string s) {
  for (size_t i = 0; i < s.size() / 2; ++i) s[i] = static_cast<char>(std::toupper(static_cast<unsigned char>(s[i])));
  return s;
}

// What the check itself reads of a device, to judge eligibility with.
struct Facts {
  int major, minor;
  size_t memory;
  bool concurrentManaged;
};

Facts factsOf(int ordinal) {
  const CUdevice dev = wbt::device(ordinal);
  size_t total = 0;
  CU_CHECK(cuDeviceTotalMem(&total, dev));
  return {wbt::attribute(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
          wbt::attribute(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR), total,
          wbt::attribute(dev, CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS) == 1};
}

// The devices meeting need, judged with the compute capability compared as a version.
std::vector<int> meeting(const ex01::Requirements& need, const std::vector<Facts>& devices) {
  std::vector<int> out;
  for (int i = 0; i < static_cast<int>(devices.size()); ++i) {
    const Facts& f = devices[static_cast<size_t>(i)];
    const bool newEnough = f.major > need.major || (f.major == need.major && f.minor >= need.minor);
    if (newEnough && f.memory >= need.memoryBytes && (!need.concurrentManagedAccess || f.concurrentManaged))
      out.push_back(i);
  }
  return out;
}

std::string listed(const std::vector<int>& ordinals) {
  std::string s = "[";
  for (int o : ordinals) s += (s.size() > 1 ? " " : "") + std::to_string(o);
  return s + "]";
}

// Compares one report with what the driver (or the fleet standing in for it) says of that ordinal.
void compareReport(int ordinal, const ex01::DeviceReport& r) {
  CAPTURE(ordinal);
  const CUdevice dev = wbt::device(ordinal);
  char name[256] = {}, busId[64] = {};
  CU_CHECK(cuDeviceGetName(name, sizeof name, dev));
  CU_CHECK(cuDeviceGetPCIBusId(busId, sizeof busId, dev));
  const std::string reportedName = r.name, expectedName = name;
  CHECK_MESSAGE(reportedName == expectedName, "the name is not the driver's, whole");
  CHECK(r.pciBusId == std::string(busId));
  const std::string reported = r.uuid, expected = uuidText(dev);
  CAPTURE(reported);
  CAPTURE(expected);
  std::string bytes;
  CUuuid uuid = {};
  CU_CHECK(cuDeviceGetUuid(&uuid, dev));
  CHECK_MESSAGE(uuidBytes(reported, bytes),
                "not in nvidia-smi's form GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx (two digits per byte)");
  CHECK_MESSAGE(bytes == std::string(uuid.bytes, sizeof uuid.bytes), "the text does not stand for the device's 16 bytes");
  CHECK_MESSAGE(reported == expected, "nvidia-smi prints the digits in lowercase");
  const Facts f = factsOf(ordinal);
  CHECK(r.major == f.major);
  CHECK(r.minor == f.minor);
  CHECK(r.totalMemory == f.memory);
  CHECK(r.multiprocessors == wbt::attribute(dev, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT));
  CHECK(r.managedMemory == (wbt::attribute(dev, CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY) == 1));
  CHECK(r.concurrentManagedAccess == f.concurrentManaged);
}

// The code reportDevice throws for an ordinal as wb::DriverError; CUDA_SUCCESS when it throws none.
// Caught by its own type only: anything else, wb::NotDone included, goes on to the reporter.
CUresult refusal(int ordinal) {
  try {
    ex01::reportDevice(ordinal);
  } catch (const wb::DriverError& e) {
    return e.code();
  }
  return CUDA_SUCCESS;
}

// Requirements and the case they stand for.
struct Need {
  const char* what;
  ex01::Requirements need;
};

// Compares eligibleDevices with the devices meeting each requirement.
void compareEligible(const std::vector<Need>& cases) {
  int count = 0;
  CU_CHECK(cuDeviceGetCount(&count));
  std::vector<std::vector<int>> got;
  for (const Need& c : cases) got.push_back(ex01::eligibleDevices(c.need));
  std::vector<Facts> devices;
  for (int i = 0; i < count; ++i) devices.push_back(factsOf(i));
  for (size_t k = 0; k < cases.size(); ++k) {
    const ex01::Requirements& need = cases[k].need;
    const std::string requirement =
        std::string(cases[k].what) + ": compute capability " + std::to_string(need.major) + "." +
        std::to_string(need.minor) + ", " + std::to_string(need.memoryBytes) + " bytes" +
        (need.concurrentManagedAccess ? ", concurrent managed access" : "");
    const std::string expected = listed(meeting(need, devices)), returned = listed(got[k]);
    CAPTURE(requirement);
    CAPTURE(expected);
    CHECK(returned == expected);
  }
}

}  // namespace

EXERCISE("device-report", "A report of what a device is and can do",
         "cuDeviceGet, then cuDeviceGetName (a buffer of 256), cuDeviceGetUuid, cuDeviceGetPCIBusId, cuDeviceTotalMem "
         "and cuDeviceGetAttribute (COMPUTE_CAPABILITY_MAJOR/MINOR, MULTIPROCESSOR_COUNT, MANAGED_MEMORY, "
         "CONCURRENT_MANAGED_ACCESS), each in CU_CHECK, all on the handle cuDeviceGet gave. CUuuid::bytes is char, "
         "signed on x86: print each byte as static_cast<unsigned char> with %02x, or 0x9c prints as ffffff9c and "
         "0x0a as a.") {
  TEST_CASE("R1 R2 R3 R4 R6: every field of every device's report is what the driver says; an ordinal past the last throws") {
    const int count = wbt::initDriver();
    for (int i = 0; i < count; ++i) compareReport(i, ex01::reportDevice(i));
    const CUresult pastLast = refusal(count), negative = refusal(-1);
    CHECK_MESSAGE(pastLast == CUDA_ERROR_INVALID_DEVICE, "an ordinal past the last must throw the refusal, not report garbage");
    CHECK_MESSAGE(negative != CUDA_SUCCESS, "ordinal -1 must throw the refusal, not report garbage");
  }

  TEST_CASE("R1 R2 R3 R4 R5 R6: the check's own devices: a long name, UUID bytes below 0x10 and from 0x80 up, bus ids of their own, managed memory with and without concurrent access") {
    wbt::initDriver();
    Fleet fleet;
    for (int i = 0; i < kFleetSize; ++i) compareReport(i, ex01::reportDevice(i));
    const CUresult pastLast = refusal(kFleetSize), negative = refusal(-1);
    CHECK_MESSAGE(pastLast == CUDA_ERROR_INVALID_DEVICE, "an ordinal past the last must throw the refusal, not report garbage");
    CHECK_MESSAGE(negative == CUDA_ERROR_INVALID_DEVICE, "ordinal -1 must throw the refusal, not report garbage");
  }
}

EXERCISE("eligible-devices", "The devices a build can run on",
         "cuDeviceGetCount, then per ordinal cuDeviceGet and on its handle cuDeviceGetAttribute "
         "(COMPUTE_CAPABILITY_MAJOR, _MINOR, CONCURRENT_MANAGED_ACCESS) and cuDeviceTotalMem. Compare the compute "
         "capability as a version: major first, the minor only when the majors are equal (9.0 meets 8.6; \"minor "
         ">= 6\" would reject it). Look at every device, and push the ordinal, not the handle.") {
  TEST_CASE("R1 R2 R3 R4: on this machine: the list holds exactly the devices that meet each requirement") {
    wbt::initDriver();
    const Facts first = factsOf(0);
    // Requirements built from device 0's own values, each of which some device meets or misses.
    compareEligible({
        {"device 0's exact compute capability and memory", {first.major, first.minor, first.memory, false}},
        {"an older major version with a higher minor", {first.major - 1, first.minor + 1, 0, false}},
        {"one minor version more than device 0", {first.major, first.minor + 1, 0, false}},
        {"one byte more memory than device 0 has", {0, 0, first.memory + 1, false}},
        {"concurrent managed access", {0, 0, 0, true}},
        {"nothing at all", {0, 0, 0, false}},
    });
  }

  TEST_CASE("R1 R2 R3 R4 R5: on the check's own devices (8.6 without concurrent managed access, 12.0, 7.5 without managed memory): the same") {
    wbt::initDriver();
    Fleet fleet;
    const size_t rtx = kFleet[0].memory;
    compareEligible({
        {"8.6, the first device's exact version", {8, 6, 0, false}},
        {"9.0, which the first device misses and the second meets", {9, 0, 0, false}},
        {"7.9: an older major version with a higher minor", {7, 9, 0, false}},
        {"exactly the first device's memory", {0, 0, rtx, false}},
        {"one byte more than the first device's memory", {0, 0, rtx + 1, false}},
        {"concurrent managed access", {0, 0, 0, true}},
        {"8.6, the first device's memory and concurrent managed access", {8, 6, rtx, true}},
        {"nothing at all", {0, 0, 0, false}},
        {"13.0, newer than every device", {13, 0, 0, false}},
    });
  }
}

EXERCISE("device-by-uuid", "Finding a GPU by its UUID from a library's first call",
         "Call cuInit(0) first (it may be the process's first CUDA call; a second cuInit(0) is harmless), then "
         "cuDeviceGetCount and per ordinal cuDeviceGet and cuDeviceGetUuid. Format each UUID as nvidia-smi does, "
         "bytes cast to unsigned char, and compare the whole text ignoring case: a part of a UUID is no match. "
         "Return the ordinal, not the handle.") {
  // In a child: nothing in that process has called cuInit when ordinalOfUuid runs.
  TEST_CASE("child: ordinalOfUuid as the first call of a process" * doctest::skip(!wbt::inChild())) {
    const int absent = ex01::ordinalOfUuid("GPU-00000000-0000-0000-0000-000000000000");
    int count = -1;
    const CUresult afterFirstCall = cuDeviceGetCount(&count);  // before this test calls cuInit itself
    CHECK_MESSAGE(afterFirstCall == CUDA_SUCCESS, "the driver was not initialised after ordinalOfUuid returned");
    CHECK_MESSAGE(absent == -1, "a UUID no device has must give -1");
    const int devices = wbt::initDriver();
    for (int i = 0; i < devices; ++i) {
      const std::string uuid = uuidText(wbt::device(i));
      const int lowerCase = ex01::ordinalOfUuid(uuid), upperCase = ex01::ordinalOfUuid(upper(uuid));
      CAPTURE(uuid);
      CHECK(lowerCase == i);
      CHECK(upperCase == i);
    }
  }

  TEST_CASE("R1 R2 R3: in a fresh process it initialises the driver, gives -1 for a UUID no device has, and finds every device by its UUID in either case") {
    const wbx::ChildResult end = wbx::runInChild("child: ordinalOfUuid as the first call of a process", 60);
    INFO("the child's output:\n" << end.output);
    CHECK_FALSE(end.timedOut);
    CHECK_FALSE(end.crashed);
    CHECK(end.code == 0);
  }

  TEST_CASE("R2 R3 R4: on the check's own devices: every UUID in any case gives its ordinal, and a part of one, or more than one, gives -1") {
    wbt::initDriver();
    Fleet fleet;
    // The learner's function is called outside the assertions, so one still not done reports "not done".
    for (int i = 0; i < kFleetSize; ++i) {
      const std::string uuid = uuidText(wbt::device(i));
      const int lowerCase = ex01::ordinalOfUuid(uuid), upperCase = ex01::ordinalOfUuid(upper(uuid)),
                mixedCase = ex01::ordinalOfUuid(mixed(uuid));
      CAPTURE(uuid);
      CHECK(lowerCase == i);
      CHECK(upperCase == i);
      CHECK(mixedCase == i);
    }
    // The first two UUIDs differ only in their last digit: the first two parts are prefixes of both.
    const std::string second = uuidText(wbt::device(1));
    const std::vector<std::string> parts = {second.substr(0, 13), second.substr(0, 39), second + "0", "GPU-", ""};
    for (const std::string& part : parts) {
      const int found = ex01::ordinalOfUuid(part);
      CAPTURE(part);
      CHECK_MESSAGE(found == -1, "a part of a UUID, or more than one, names no device");
    }
  }
}
