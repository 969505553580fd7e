// The checks of lesson 12's exercises (lessons/12-versions-and-entry-points/exercises.cpp). The
// image loads run in child processes (this binary again, one test case each), so that the driver's
// JIT settings are the ones each check chooses, whatever the shell that started it sets: the
// driver reads them once, at cuInit (lesson 12 shows the same for its own children). This binary
// stands between the code and two more entry points: cuGetProcAddress, which a check can make fail
// (wbx::FailCall), and cuDriverGetVersion, which a check can make report another driver's version.
// Each case's name (but the children's) begins with the requirements it verifies.
#include "check.hpp"
#include "scratch.hpp"
#include "12-versions-and-entry-points/exercises.hpp"

#include <cudaTypedefs.h>

#include <atomic>
#include <cctype>
#include <string>
#include <vector>

WBX_INTERPOSE(cuGetProcAddress,
              (const char* symbol, void** pfn, int cudaVersion, cuuint64_t flags,
               CUdriverProcAddressQueryResult* symbolStatus),
              (symbol, pfn, cudaVersion, flags, symbolStatus))

// The version cuDriverGetVersion reports while a check pretends that this process runs on another
// driver (PretendDriver); 0: the real driver's.
static std::atomic<int> pretendedDriver{0};

extern "C" CUresult CUDAAPI cuDriverGetVersion(int* version) {
  using Real = CUresult(CUDAAPI*)(int*);
  static const Real real = reinterpret_cast<Real>(::wbx::detail::real("cuDriverGetVersion"));
  const int pretended = pretendedDriver.load();
  if (pretended != 0 && version != nullptr) {
    *version = pretended;
    return CUDA_SUCCESS;
  }
  return real ? real(version) : CUDA_ERROR_NOT_FOUND;
}

namespace {

// While it lives, cuDriverGetVersion reports version, in this process only.
class PretendDriver {
 public:
  explicit PretendDriver(int version) { pretendedDriver.store(version); }
  ~PretendDriver() { pretendedDriver.store(0); }
  PretendDriver(const PretendDriver&) = delete;
  PretendDriver& operator=(const PretendDriver&) = delete;
};

// "12.8" for 12080.
std::string majorMinor(int version) { return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10); }

// Whether text names version as major.minor on its own: "12.8" in "CUDA 12.8," but not in "12.80" or "112.8".
bool names(const std::string& text, int version) {
  const std::string v = majorMinor(version);
  for (size_t at = text.find(v); at != std::string::npos; at = text.find(v, at + 1)) {
    const bool before = at > 0 && (std::isdigit(static_cast<unsigned char>(text[at - 1])) || text[at - 1] == '.');
    const size_t end = at + v.size();
    const bool after = end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]));
    if (!before && !after) return true;
  }
  return false;
}

const char* levelName(ex12::Compatibility c) {
  switch (c) {
    case ex12::Compatibility::Full: return "Full";
    case ex12::Compatibility::MinorVersion: return "MinorVersion";
    case ex12::Compatibility::None: return "None";
  }
  return "not a Compatibility";
}

const char* statusName(ex12::EntryPoint s) {
  switch (s) {
    case ex12::EntryPoint::Found: return "Found";
    case ex12::EntryPoint::NotInDriver: return "NotInDriver";
    case ex12::EntryPoint::NotInVersion: return "NotInVersion";
    case ex12::EntryPoint::BeyondDriver: return "BeyondDriver";
  }
  return "not an EntryPoint";
}

int driverVersion() {
  int version = 0;
  CU_CHECK(cuDriverGetVersion(&version));
  return version;
}

unsigned deviceArch(CUdevice dev) {
  return 10 * wbt::attribute(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) +
         wbt::attribute(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
}

// The built cubin a device of architecture arch runs: the same major version, the highest minor not
// above its own ("" when the build has none).
std::string ownCubin(unsigned arch) {
  std::string found;
  for (unsigned built : wb::cubinArchitectures())
    if (built / 10 == arch / 10 && built <= arch) found = "vector_ops.sm_" + std::to_string(built) + ".cubin";
  return found;
}

// A cubin of another major version, which such a device cannot run (every build has one: a build for
// one architecture gets one more, WORKBOOK_OTHER_ARCH).
std::string foreignCubin(unsigned arch) {
  for (unsigned built : wb::cubinArchitectures())
    if (built / 10 != arch / 10) return "vector_ops.sm_" + std::to_string(built) + ".cubin";
  return "";
}

// The primary context of device 0, current.
struct Lab {
  wbt::RetainedPrimary primary{(wbt::initDriver(), wbt::device(0))};
  wbt::Pushed current{primary.get()};
};

// A module loadKernel returned, unloaded at scope exit.
struct Unload {
  CUmodule module = nullptr;
  ~Unload() {
    if (module) cuModuleUnload(module);
  }
};

// Whether the kernel loadKernel gave (fill) and scale from its module compute 2 * 3 + 1 everywhere.
bool computes(const ex12::LoadedKernel& k) {
  CUfunction scale = nullptr;
  if (!k.module || !k.function || cuModuleGetFunction(&scale, k.module, "scale") != CUDA_SUCCESS) return false;
  return wb::mismatches(wb::fillAndScale(k.function, scale, 4096, 2.0f, 3.0f, 1.0f), 7.0f) == 0;
}

// What loading the PTX and getting the kernel name from it gets here, done by the check itself (and
// undone): the error loadKernel must throw when its cubin fails too.
CUresult ptxAloneGets(const std::vector<char>& ptx, const char* name) {
  CUmodule module = nullptr;
  CUfunction function = nullptr;
  CUresult rc = cuModuleLoadData(&module, ptx.data());
  if (rc == CUDA_SUCCESS) {
    rc = cuModuleGetFunction(&function, module, name);
    cuModuleUnload(module);
  }
  return rc;
}

// The JIT settings of a child, whatever this process's environment holds: a cache folder of its own
// (empty, and off when the JIT is forbidden, so that no earlier compile can answer), nothing forced,
// and the JIT allowed or forbidden.
std::vector<std::string> jitSettings(const std::string& cache, bool forbidden) {
  return {"CUDA_CACHE_PATH=" + cache,
          forbidden ? "CUDA_CACHE_DISABLE=1" : "CUDA_CACHE_DISABLE=0",
          "CUDA_CACHE_MAXSIZE=1073741824",
          "CUDA_FORCE_PTX_JIT",
          "CUDA_FORCE_JIT",
          forbidden ? "CUDA_DISABLE_PTX_JIT=1" : "CUDA_DISABLE_PTX_JIT",
          forbidden ? "CUDA_DISABLE_JIT=1" : "CUDA_DISABLE_JIT"};
}

// This check again, running one test case in a child with the environment changed by env
// ("NAME=value" sets, a bare "NAME" removes), ended after 30 s. A child that reached a starting body
// makes this check "not done" too; one that skipped (exit 77) makes it skipped, with its output.
wbx::ChildResult runChild(const std::string& testCase, std::vector<std::string> env) {
  env.push_back("WORKBOOK_CHILD=1");
  env.push_back("WORKBOOK_EXERCISE_RESULTS");
  const wb::ProcessEnd end = wb::runProcess({wb::selfPath(), "--test-case=" + testCase, "--no-version"}, env, 30);
  const size_t notDone = end.output.find("NOT DONE: ");
  if (notDone != std::string::npos) {
    const size_t from = notDone + 10;
    throw wb::NotDone(end.output.substr(from, end.output.find(' ', from) - from));
  }
  if (end.signal == 0 && !end.timedOut && end.code == 77) throw wbx::Skipped(end.output);
  return {end.signal != 0, end.timedOut, end.code, end.output};
}

// The parent's part: the architecture's cubins exist, and the child ran to a clean end.
void runLoadChild(const std::string& testCase, bool jitForbidden) {
  wbt::initDriver();
  const unsigned arch = deviceArch(wbt::device(0));
  if (ownCubin(arch).empty() || foreignCubin(arch).empty())
    throw wbx::Skipped("the build has no cubin for this device's architecture sm_" + std::to_string(arch) +
                       ": configure with -DWORKBOOK_CUDA_ARCHS=" + std::to_string(arch) + " (README step 2)");
  wb::ScratchDir dir;
  const wbx::ChildResult child = runChild(testCase, jitSettings(dir.path() + "/cache", jitForbidden));
  const std::string output = child.output;
  CAPTURE(output);
  CHECK_FALSE(child.timedOut);
  CHECK_FALSE(child.crashed);
  CHECK_MESSAGE(child.code == 0, "the child's checks failed (its output is above)");
}

}  // namespace

EXERCISE("entry-point", "A driver function looked up by name and version, every answer told apart",
         "cuGetProcAddress(symbol, &pfn, cudaVersion, CU_GET_PROC_ADDRESS_DEFAULT, &status) is the five-argument "
         "form (cuGetProcAddress_v2, CUDA 12.0). It returns CUDA_ERROR_INVALID_VALUE for a version newer than the "
         "driver (cuDriverGetVersion says which that is). Otherwise read status, not pfn: "
         "CU_GET_PROC_ADDRESS_SUCCESS, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND and "
         "CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT all come with CUDA_SUCCESS, and a null pointer alone does not "
         "say which of the last two it was.") {
  TEST_CASE("R1: cuMemAlloc, cuMemFree and cuDriverGetVersion as of CUDA 12.0 are Found, and work through their types from cudaTypedefs.h") {
    wbt::initDriver();
    const ex12::Resolved alloc = ex12::resolveEntryPoint("cuMemAlloc", 12000);
    const ex12::Resolved release = ex12::resolveEntryPoint("cuMemFree", 12000);
    const ex12::Resolved version = ex12::resolveEntryPoint("cuDriverGetVersion", 12000);
    const std::string allocStatus = statusName(alloc.status), freeStatus = statusName(release.status),
                      versionStatus = statusName(version.status);
    CAPTURE(allocStatus);
    CAPTURE(freeStatus);
    CAPTURE(versionStatus);
    CHECK(alloc.status == ex12::EntryPoint::Found);
    CHECK(release.status == ex12::EntryPoint::Found);
    CHECK(version.status == ex12::EntryPoint::Found);
    REQUIRE(alloc.pfn != nullptr);
    REQUIRE(release.pfn != nullptr);
    REQUIRE(version.pfn != nullptr);
    Lab lab;
    CUdeviceptr p = 0;
    CHECK(reinterpret_cast<PFN_cuMemAlloc_v3020>(alloc.pfn)(&p, 4096) == CUDA_SUCCESS);
    CHECK(p != 0);
    if (p) {
      CHECK(reinterpret_cast<PFN_cuMemFree_v3020>(release.pfn)(p) == CUDA_SUCCESS);
    }
    int through = 0;
    CHECK(reinterpret_cast<PFN_cuDriverGetVersion_v2020>(version.pfn)(&through) == CUDA_SUCCESS);
    CHECK(through == driverVersion());
  }

  TEST_CASE("R1 R2 R3 R4: cuMemAlloc as of the driver's own version is Found; an unknown name is NotInDriver, a version older than the function NotInVersion, one a minor or a major version newer than the driver BeyondDriver, each with no pointer") {
    wbt::initDriver();
    const int driver = driverVersion();
    const ex12::Resolved own = ex12::resolveEntryPoint("cuMemAlloc", driver);
    const ex12::Resolved unknown = ex12::resolveEntryPoint("cuNoSuchFunction", 12000);
    const ex12::Resolved tooOld = ex12::resolveEntryPoint("cuLibraryLoadData", 11080);  // cuLibrary* arrived in 12.0
    const int nextMinor = driver + 10, nextMajor = (driver / 1000 + 1) * 1000;
    const ex12::Resolved minorAhead = ex12::resolveEntryPoint("cuMemAlloc", nextMinor);
    const ex12::Resolved majorAhead = ex12::resolveEntryPoint("cuMemAlloc", nextMajor);
    const std::string ownStatus = statusName(own.status), unknownStatus = statusName(unknown.status),
                      tooOldStatus = statusName(tooOld.status), minorStatus = statusName(minorAhead.status),
                      majorStatus = statusName(majorAhead.status);
    CAPTURE(driver);
    CAPTURE(ownStatus);
    CAPTURE(unknownStatus);
    CAPTURE(tooOldStatus);
    CAPTURE(minorStatus);
    CAPTURE(majorStatus);
    CHECK_MESSAGE(own.status == ex12::EntryPoint::Found, "the driver's own version is not newer than the driver");
    CHECK(own.pfn != nullptr);
    CHECK(unknown.status == ex12::EntryPoint::NotInDriver);
    CHECK(unknown.pfn == nullptr);
    CHECK_MESSAGE(tooOld.status == ex12::EntryPoint::NotInVersion,
                  "cuLibraryLoadData exists in this driver: as of 11.8 the version asked for is not sufficient "
                  "(CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT), which a null pointer alone does not tell");
    CHECK(tooOld.pfn == nullptr);
    CHECK_MESSAGE(minorAhead.status == ex12::EntryPoint::BeyondDriver,
                  "one minor version past the driver is past it too: cuGetProcAddress refuses any version greater "
                  "than the driver's");
    CHECK(minorAhead.pfn == nullptr);
    CHECK(majorAhead.status == ex12::EntryPoint::BeyondDriver);
    CHECK(majorAhead.pfn == nullptr);
  }

  TEST_CASE("R5: when cuGetProcAddress itself fails for a version the driver supports, the error is thrown as wb::DriverError with its code, not taken for an answer") {
    wbt::initDriver();
    for (const CUresult injected : {CUDA_ERROR_INVALID_VALUE, CUDA_ERROR_NOT_SUPPORTED}) {
      const std::string failure = wb::errorName(injected);
      CAPTURE(failure);
      bool threw = false, fired = false;
      CUresult code = CUDA_SUCCESS;
      std::string answer = "none";
      {
        wbx::FailCall fail("cuGetProcAddress", injected);
        try {
          answer = statusName(ex12::resolveEntryPoint("cuMemAlloc", 12000).status);
        } catch (const wb::DriverError& e) {
          threw = true;
          code = e.code();
        }
        fired = fail.fired();
      }
      CAPTURE(answer);
      REQUIRE_MESSAGE(fired, "resolveEntryPoint did not call cuGetProcAddress");
      CHECK_MESSAGE(threw, "a failure of the call for a version this driver supports is no answer: throw it");
      CHECK(code == injected);
    }
  }
}

EXERCISE("version-check", "A start-up check of the driver against the toolkit the program was built with",
         "Compare the major versions (v / 1000) first: a driver of an older major version is None, whatever the "
         "minor versions. With the same major version, an older driver is MinorVersion, not None: comparing the "
         "whole numbers (12040 against 12080) refuses programs the driver runs. A driver at least as new as the "
         "toolkit is Full, across major versions too. major.minor is v / 1000 and v % 1000 / 10: 12080 is 12.8.") {
  TEST_CASE("R1 R2 R3 R4: eight version pairs: the level the compatibility guide gives, and a message that names both versions as major.minor") {
    struct Pair {
      int driver, toolkit;
      ex12::Compatibility level;
    };
    const Pair pairs[] = {
        {13000, 13000, ex12::Compatibility::Full},          {13020, 13000, ex12::Compatibility::Full},
        {13000, 12080, ex12::Compatibility::Full},          {12080, 12040, ex12::Compatibility::Full},
        {12040, 12080, ex12::Compatibility::MinorVersion},  {13000, 13020, ex12::Compatibility::MinorVersion},
        {12080, 13000, ex12::Compatibility::None},          {11080, 12000, ex12::Compatibility::None},
    };
    for (const Pair& pair : pairs) {
      const ex12::VersionCheck got = ex12::checkVersions(pair.driver, pair.toolkit);
      const std::string driver = majorMinor(pair.driver), toolkit = majorMinor(pair.toolkit);
      const std::string level = levelName(got.level), expected = levelName(pair.level), message = got.message;
      CAPTURE(driver);
      CAPTURE(toolkit);
      CAPTURE(message);
      CHECK_MESSAGE(level == expected, ("the driver supports CUDA " + driver + ", the program was built with CUDA " +
                                            toolkit + ": expected " + expected + ", got " + level));
      CHECK_MESSAGE(names(got.message, pair.driver), ("the message does not name the driver's version as " + driver));
      CHECK_MESSAGE(names(got.message, pair.toolkit), ("the message does not name the toolkit's version as " + toolkit));
    }
  }

  TEST_CASE("R6: checkThisProcess says what checkVersions says for cuDriverGetVersion and CUDA_VERSION") {
    const ex12::VersionCheck here = ex12::checkThisProcess();
    wbt::initDriver();
    const ex12::VersionCheck expected = ex12::checkVersions(driverVersion(), CUDA_VERSION);
    const std::string level = levelName(here.level), expectedLevel = levelName(expected.level);
    CAPTURE(level);
    CAPTURE(expectedLevel);
    CHECK(here.level == expected.level);
    CHECK(here.message == expected.message);
    CHECK_MESSAGE(names(here.message, CUDA_VERSION),
                  ("the message does not name CUDA_VERSION as " + majorMinor(CUDA_VERSION)));
  }

  TEST_CASE("R6: checkThisProcess asks the driver it runs on: with cuDriverGetVersion reporting a driver a major version older than CUDA_VERSION it says None, and with one a major version newer Full") {
    const int built = CUDA_VERSION;
    const int older = (built / 1000 - 1) * 1000 + 80, newer = (built / 1000 + 1) * 1000;
    ex12::VersionCheck underOlder, underNewer;
    {
      PretendDriver pretend(older);
      underOlder = ex12::checkThisProcess();
    }
    {
      PretendDriver pretend(newer);
      underNewer = ex12::checkThisProcess();
    }
    const std::string olderLevel = levelName(underOlder.level), newerLevel = levelName(underNewer.level);
    const std::string olderMessage = underOlder.message, newerMessage = underNewer.message;
    CAPTURE(olderLevel);
    CAPTURE(olderMessage);
    CAPTURE(newerLevel);
    CAPTURE(newerMessage);
    CHECK_MESSAGE(underOlder.level == ex12::Compatibility::None,
                  ("a driver for CUDA " + majorMinor(older) + " and a program built with CUDA " + majorMinor(built) +
                   ": is the driver's version the one cuDriverGetVersion reports, and the toolkit's CUDA_VERSION?"));
    CHECK(names(underOlder.message, older));
    CHECK(names(underOlder.message, built));
    CHECK(underNewer.level == ex12::Compatibility::Full);
    CHECK(names(underNewer.message, newer));
    CHECK(names(underNewer.message, built));
  }
}

EXERCISE("cubin-or-ptx", "A kernel from the cubin for this GPU, or from PTX where the cubin cannot run",
         "cuModuleLoadData(&module, cubin.data()), then cuModuleGetFunction(&function, module, name); on an error "
         "from either, cuModuleUnload the module if there is one, and do the same with ptx.data(). Try the cubin "
         "first: PTX loads on every GPU, but costs a compile at every cold start. A cubin for another "
         "architecture gets CUDA_ERROR_NO_BINARY_FOR_GPU; with the JIT forbidden, the PTX's load or its first "
         "function says why it failed: throw that one (CU_CHECK does).") {
  // In the children: the driver read the JIT settings the parent chose (jitSettings) at cuInit.
  TEST_CASE("child: loadKernel with the JIT allowed" * doctest::skip(!wbt::inChild())) {
    Lab lab;
    const unsigned arch = deviceArch(wbt::device(0));
    const std::vector<char> ptx = wb::readVerifiedImage("vector_ops.ptx");
    const std::vector<char> own = wb::readVerifiedImage(ownCubin(arch)), foreign = wb::readVerifiedImage(foreignCubin(arch));
    Unload mine, other;
    wbx::Holdings before = wbx::holdings();
    const ex12::LoadedKernel fromOwn = ex12::loadKernel(own, ptx, "fill");
    mine.module = fromOwn.module;
    const std::string heldByOwn = wbx::holdings().differenceFrom(before);
    CHECK_MESSAGE(!fromOwn.fromPtx, "the kernel came from the PTX although the cubin for this device loads: a cold "
                                    "start pays a compile it did not need");
    CHECK_MESSAGE(computes(fromOwn), "fill and scale from the module of the device's own cubin computed wrong");
    CHECK_MESSAGE(heldByOwn == "1 module more", "loaded from the device's own cubin, the process holds: " << heldByOwn);
    before = wbx::holdings();
    const ex12::LoadedKernel fromForeign = ex12::loadKernel(foreign, ptx, "fill");
    other.module = fromForeign.module;
    const std::string heldByForeign = wbx::holdings().differenceFrom(before);
    CHECK_MESSAGE(fromForeign.fromPtx, "with a cubin for another architecture the kernel must come from the PTX");
    CHECK_MESSAGE(computes(fromForeign), "fill and scale from the module of the PTX computed wrong");
    CHECK_MESSAGE(heldByForeign == "1 module more",
                  "loaded from the PTX after the foreign cubin, the process holds: " << heldByForeign);

    // A kernel neither image has: the cubin loads and its lookup fails, then the PTX does the same.
    const char* const missing = "no_such_kernel";
    before = wbx::holdings();
    bool threw = false;
    CUresult thrown = CUDA_SUCCESS;
    {
      Unload unexpected;
      try {
        unexpected.module = ex12::loadKernel(own, ptx, missing).module;
      } catch (const wb::DriverError& e) {
        threw = true;
        thrown = e.code();
      }
    }
    const std::string heldByMissing = wbx::holdings().differenceFrom(before);
    const CUresult ptxAlone = ptxAloneGets(ptx, missing);
    const std::string thrownName = wb::errorName(thrown), ptxName = wb::errorName(ptxAlone);
    CAPTURE(thrownName);
    CAPTURE(ptxName);
    REQUIRE(ptxAlone != CUDA_SUCCESS);
    CHECK_MESSAGE(threw, "loadKernel did not throw wb::DriverError for a kernel neither image has");
    CHECK_MESSAGE(thrown == ptxAlone, "the error thrown is not the one the PTX gets");
    CHECK_MESSAGE(heldByMissing == "", "after a failed loadKernel the process still holds: " << heldByMissing);
  }

  TEST_CASE("child: loadKernel with the JIT forbidden" * doctest::skip(!wbt::inChild())) {
    Lab lab;
    const unsigned arch = deviceArch(wbt::device(0));
    const std::vector<char> ptx = wb::readVerifiedImage("vector_ops.ptx");
    const std::vector<char> own = wb::readVerifiedImage(ownCubin(arch)), foreign = wb::readVerifiedImage(foreignCubin(arch));
    Unload mine;
    wbx::Holdings before = wbx::holdings();
    const ex12::LoadedKernel fromOwn = ex12::loadKernel(own, ptx, "fill");
    mine.module = fromOwn.module;
    const std::string heldByOwn = wbx::holdings().differenceFrom(before);
    CHECK_MESSAGE(!fromOwn.fromPtx, "the kernel came from the PTX although the cubin for this device loads");
    CHECK_MESSAGE(computes(fromOwn), "fill and scale from the module of the device's own cubin computed wrong");
    CHECK_MESSAGE(heldByOwn == "1 module more", "loaded from the device's own cubin, the process holds: " << heldByOwn);
    before = wbx::holdings();
    bool threw = false;
    CUresult thrown = CUDA_SUCCESS;
    {
      Unload unexpected;
      try {
        unexpected.module = ex12::loadKernel(foreign, ptx, "fill").module;
      } catch (const wb::DriverError& e) {
        threw = true;
        thrown = e.code();
      }
    }
    const std::string heldByFailure = wbx::holdings().differenceFrom(before);
    // What the PTX alone gets here, loaded by the check itself: the error loadKernel must throw.
    const CUresult ptxAlone = ptxAloneGets(ptx, "fill");
    if (ptxAlone == CUDA_SUCCESS)
      throw wbx::Skipped("this driver compiled the PTX under CUDA_DISABLE_PTX_JIT=1: the JIT is not forbidden here");
    const std::string thrownName = wb::errorName(thrown), ptxName = wb::errorName(ptxAlone);
    CAPTURE(thrownName);
    CAPTURE(ptxName);
    CHECK_MESSAGE(threw, "loadKernel did not throw wb::DriverError although neither image can be used here");
    CHECK_MESSAGE(thrown == ptxAlone, "the error thrown is not the PTX's: the cubin's error is expected on another "
                                      "GPU and does not say why the fallback failed");
    CHECK_MESSAGE(heldByFailure == "", "after a failed loadKernel the process still holds: " << heldByFailure);
  }

  TEST_CASE("R1 R2 R3 R4: with the JIT allowed: the device's own cubin is used, and a cubin for another architecture falls back to the PTX") {
    runLoadChild("child: loadKernel with the JIT allowed", false);
  }

  TEST_CASE("R1 R3 R4: with the JIT forbidden: the device's own cubin still loads, and the fallback fails with the PTX's own error") {
    runLoadChild("child: loadKernel with the JIT forbidden", true);
  }
}
