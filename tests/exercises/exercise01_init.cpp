// The checks of lesson 01's exercises (lessons/01-init/exercises.cpp). What a device is comes from
// the driver in the same run: nothing here knows which GPU it runs on.
#include "check.hpp"
#include "01-init/exercises.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <string>
#include <vector>

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

}  // namespace

EXERCISE("device-report", "A report of what a device is and can do",
         "cuDeviceGet, then cuDeviceGetName, cuDeviceGetUuid, cuDeviceGetPCIBusId, cuDeviceTotalMem and "
         "cuDeviceGetAttribute (COMPUTE_CAPABILITY_MAJOR/MINOR, MULTIPROCESSOR_COUNT, MANAGED_MEMORY, "
         "CONCURRENT_MANAGED_ACCESS), each in CU_CHECK. CUuuid::bytes is char, signed on x86: cast each byte to "
         "unsigned char before printing it as two hex digits, or 0x9c prints as ffffff9c.") {
  TEST_CASE("every field of every device's report is what the driver says; an ordinal past the last throws CUDA_ERROR_INVALID_DEVICE") {
    const int count = wbt::initDriver();
    for (int i = 0; i < count; ++i) {
      const ex01::DeviceReport r = ex01::reportDevice(i);
      CAPTURE(i);
      const CUdevice dev = wbt::device(i);
      char name[256] = {}, busId[32] = {};
      CU_CHECK(cuDeviceGetName(name, sizeof name, dev));
      CU_CHECK(cuDeviceGetPCIBusId(busId, sizeof busId, dev));
      CHECK(r.name == name);
      CHECK(r.pciBusId == busId);
      const std::string reported = r.uuid, expected = uuidText(dev);
      CAPTURE(reported);
      CAPTURE(expected);
      std::string bytes;
      CUuuid uuid = {};
      CU_CHECK(cuDeviceGetUuid(&uuid, dev));
      CHECK_MESSAGE(uuidBytes(reported, bytes), "not in nvidia-smi's form GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx");
      CHECK_MESSAGE(bytes == std::string(uuid.bytes, sizeof uuid.bytes),
                    "the text does not stand for the device's 16 bytes");
      CHECK_MESSAGE(reported == expected, "nvidia-smi prints the digits in lowercase");
      const Facts f = factsOf(i);
      CHECK(r.major == f.major);
      CHECK(r.minor == f.minor);
      CHECK(r.totalMemory == f.memory);
      CHECK(r.multiprocessors == wbt::attribute(dev, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT));
      CHECK(r.managedMemory == (wbt::attribute(dev, CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY) == 1));
      CHECK(r.concurrentManagedAccess == f.concurrentManaged);
    }
    // Caught by its own type only: anything else, wb::NotDone included, goes on to the reporter.
    CUresult refused = CUDA_SUCCESS;
    try {
      ex01::reportDevice(count);
    } catch (const wb::DriverError& e) {
      refused = e.code();
    }
    CHECK_MESSAGE(refused == CUDA_ERROR_INVALID_DEVICE,
                  "an ordinal past the last must throw the refusal, not report garbage");
  }
}

EXERCISE("eligible-devices", "The devices a build can run on",
         "cuDeviceGetCount, then per device cuDeviceGetAttribute (COMPUTE_CAPABILITY_MAJOR, _MINOR, "
         "CONCURRENT_MANAGED_ACCESS) and cuDeviceTotalMem. Compare the compute capability as a version: "
         "major first, the minor only when the majors are equal (9.0 meets 8.6; \"minor >= 6\" would reject it).") {
  TEST_CASE("the list holds exactly the devices that meet each requirement, compute capability compared as a version") {
    const int count = wbt::initDriver();
    std::vector<Facts> devices;
    const Facts first = factsOf(0);
    // Requirements built from device 0's own values, each of which some device meets or misses.
    std::vector<std::pair<const char*, ex01::Requirements>> cases = {
        {"device 0's exact compute capability and memory", {first.major, first.minor, first.memory, false}},
        {"an older major version with a higher minor", {first.major - 1, first.minor + 1, 0, false}},
        {"one minor version more than device 0", {first.major, first.minor + 1, 0, false}},
        {"one byte more memory than device 0 has", {0, 0, first.memory + 1, false}},
        {"concurrent managed access", {0, 0, 0, true}},
        {"nothing at all", {0, 0, 0, false}},
    };
    std::vector<std::vector<int>> got;
    for (const auto& c : cases) got.push_back(ex01::eligibleDevices(c.second));
    for (int i = 0; i < count; ++i) devices.push_back(factsOf(i));
    for (size_t k = 0; k < cases.size(); ++k) {
      const ex01::Requirements& need = cases[k].second;
      const std::string requirement =
          std::string(cases[k].first) + ": compute capability " + std::to_string(need.major) + "." +
          std::to_string(need.minor) + ", " + wb::bytes(need.memoryBytes) +
          (need.concurrentManagedAccess ? ", concurrent managed access" : "");
      const std::string expected = listed(meeting(need, devices)), returned = listed(got[k]);
      CAPTURE(requirement);
      CAPTURE(expected);
      CHECK(returned == expected);
    }
  }
}

EXERCISE("device-by-uuid", "Finding a GPU by its UUID from a library's first call",
         "Call cuInit(0) first (it may be the process's first CUDA call; a second cuInit(0) is harmless), then "
         "cuDeviceGetCount and per ordinal cuDeviceGet and cuDeviceGetUuid. Format each UUID as nvidia-smi does, "
         "bytes cast to unsigned char, and compare ignoring case.") {
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
      CAPTURE(uuid);
      CHECK(ex01::ordinalOfUuid(uuid) == i);
      CHECK(ex01::ordinalOfUuid(upper(uuid)) == i);
    }
  }

  TEST_CASE("in a fresh process it initialises the driver and finds every device by its UUID in either case") {
    const wbx::ChildResult end = wbx::runInChild("child: ordinalOfUuid as the first call of a process", 60);
    INFO("the child's output:\n" << end.output);
    CHECK_FALSE(end.timedOut);
    CHECK_FALSE(end.crashed);
    CHECK(end.code == 0);
  }
}
