// The checks of lesson 19's exercises (lessons/19-runtime-compilation/exercises.cpp). Each calls the
// learner's function first. Kernels are checked by launching them and comparing every value; the
// cache is checked by counting the calls of the compiler it is given, never by timing, and by
// watching its folder. The check stands between the code and NVRTC as the ledger does for the
// driver: it counts programs made and destroyed, can make one compile fail, and overwrites the
// lowered names a program handed out when it is destroyed (NVRTC releases them then). Every source
// a learner's function compiles is new to the run, so NVRTC's own cache (CUDA 12.9 and newer) never
// answers in place of a compile. Each case's name begins with the requirements it verifies.
#include "check.hpp"
#include "nvrtc_checked.hpp"
#include "scratch.hpp"
#include "19-runtime-compilation/exercises.hpp"

#include <nvrtc.h>

#include <dirent.h>
#include <dlfcn.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

// ---- NVRTC as the check sees it --------------------------------------------------------------------

namespace {

std::atomic<long> programsMade{0}, programsDestroyed{0};
std::atomic<int> failNextCompile{NVRTC_SUCCESS};

// The lowered names handed out, by program. A destroyed program's names are overwritten and kept
// (never freed), so a pointer kept past nvrtcDestroyProgram reads a wrong name, not freed memory.
std::mutex namesMutex;
std::map<nvrtcProgram, std::vector<std::unique_ptr<std::string>>>& loweredNames() {
  static auto* names = new std::map<nvrtcProgram, std::vector<std::unique_ptr<std::string>>>;
  return *names;
}
std::vector<std::unique_ptr<std::string>>& overwrittenNames() {
  static auto* kept = new std::vector<std::unique_ptr<std::string>>;
  return *kept;
}

template <class F>
F nvrtcEntry(const char* name) {
  return reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}

long livePrograms() { return programsMade.load() - programsDestroyed.load(); }

}  // namespace

extern "C" nvrtcResult nvrtcCreateProgram(nvrtcProgram* prog, const char* src, const char* name, int numHeaders,
                                          const char* const* headers, const char* const* includeNames) {
  using Real = nvrtcResult (*)(nvrtcProgram*, const char*, const char*, int, const char* const*, const char* const*);
  static const Real real = nvrtcEntry<Real>("nvrtcCreateProgram");
  if (!real) return NVRTC_ERROR_INTERNAL_ERROR;
  const nvrtcResult rc = real(prog, src, name, numHeaders, headers, includeNames);
  if (rc == NVRTC_SUCCESS) ++programsMade;
  return rc;
}

extern "C" nvrtcResult nvrtcDestroyProgram(nvrtcProgram* prog) {
  using Real = nvrtcResult (*)(nvrtcProgram*);
  static const Real real = nvrtcEntry<Real>("nvrtcDestroyProgram");
  if (!real) return NVRTC_ERROR_INTERNAL_ERROR;
  const nvrtcProgram was = prog ? *prog : nullptr;
  const nvrtcResult rc = real(prog);
  if (rc == NVRTC_SUCCESS && was) {
    ++programsDestroyed;
    std::lock_guard<std::mutex> lock(namesMutex);
    const auto it = loweredNames().find(was);
    if (it != loweredNames().end()) {
      for (auto& name : it->second) {
        for (char& c : *name) c = 'X';
        overwrittenNames().push_back(std::move(name));
      }
      loweredNames().erase(it);
    }
  }
  return rc;
}

extern "C" nvrtcResult nvrtcCompileProgram(nvrtcProgram prog, int numOptions, const char* const* options) {
  using Real = nvrtcResult (*)(nvrtcProgram, int, const char* const*);
  static const Real real = nvrtcEntry<Real>("nvrtcCompileProgram");
  if (const int injected = failNextCompile.exchange(NVRTC_SUCCESS)) return static_cast<nvrtcResult>(injected);
  if (!real) return NVRTC_ERROR_INTERNAL_ERROR;
  return real(prog, numOptions, options);
}

extern "C" nvrtcResult nvrtcGetLoweredName(nvrtcProgram prog, const char* const name_expression,
                                           const char** lowered_name) {
  using Real = nvrtcResult (*)(nvrtcProgram, const char*, const char**);
  static const Real real = nvrtcEntry<Real>("nvrtcGetLoweredName");
  if (!real) return NVRTC_ERROR_INTERNAL_ERROR;
  const char* theirs = nullptr;
  const nvrtcResult rc = real(prog, name_expression, &theirs);
  if (rc != NVRTC_SUCCESS || !lowered_name) return rc;
  std::lock_guard<std::mutex> lock(namesMutex);
  auto& names = loweredNames()[prog];
  names.push_back(std::make_unique<std::string>(theirs ? theirs : ""));
  *lowered_name = names.back()->c_str();
  return rc;
}

namespace {

// The primary context of device 0, current.
struct Lab {
  wbt::RetainedPrimary primary{(wbt::initDriver(), wbt::device(0))};
  wbt::Pushed current{primary.get()};
  CUdevice dev() const { return primary.device(); }
  int arch() const {
    return 10 * wbt::attribute(dev(), CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) +
           wbt::attribute(dev(), CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  }
};

// Unloads a library the learner's function returned, at scope exit.
struct Unload {
  CUlibrary lib;
  ~Unload() {
    if (lib) cuLibraryUnload(lib);
  }
};

// Runs f, which is to throw: true when it threw anything but wb::NotDone (which goes on).
template <class F>
bool threw(F&& f) {
  try {
    f();
  } catch (const wb::NotDone&) {
    throw;
  } catch (const std::exception&) {
    return true;
  }
  return false;
}

template <class T>
std::vector<T> ramp(unsigned n = 4096) {
  std::vector<T> v(n);
  for (unsigned i = 0; i < n; ++i) v[i] = static_cast<T>(i % 100);
  return v;
}

// Launches kernel(T* x, unsigned n) over the ramp; how many values differ from want(x).
template <class T, class F>
size_t wrongValues(CUkernel kernel, F want) {
  std::vector<T> values = ramp<T>();
  const std::vector<T> in = values;
  wbt::DeviceBuffer x(values.size() * sizeof(T));
  CU_CHECK(cuMemcpyHtoD(x.get(), values.data(), x.size()));
  CUdeviceptr p = x.get();
  unsigned n = static_cast<unsigned>(values.size());
  void* args[] = {&p, &n};
  CU_CHECK(cuLaunchKernel(reinterpret_cast<CUfunction>(kernel), (n + 255) / 256, 1, 1, 256, 1, 1, 0, nullptr, args,
                          nullptr));
  CU_CHECK(cuMemcpyDtoH(values.data(), x.get(), x.size()));
  size_t wrong = 0;
  for (size_t i = 0; i < values.size(); ++i) wrong += values[i] != want(in[i]);
  return wrong;
}

// NVRTC for the check's own references: the lesson's compile (common/nvrtc_checked.hpp), NVRTC's own
// cache allowed (every source compiled here is new to the run); the program named "reference.cu".
wb::Compiled nvrtc(const std::string& source, const std::vector<std::string>& options,
                   const std::vector<std::string>& nameExpressions = {}) {
  return wb::nvrtcCompile(source, "reference.cu", options, nameExpressions, wb::NvrtcCache::Allowed);
}

// The source with a variable appended that no source of any earlier run declared: NVRTC's own
// cache has nothing to answer with, so a compile of it is a compile (its log included).
std::string newToThisRun(const std::string& source) {
  static unsigned counter = 0;
  const auto now = std::chrono::system_clock::now().time_since_epoch().count();
  return source + "__device__ int wbx_new_" + std::to_string(getpid()) + "_" + std::to_string(now) + "_" +
         std::to_string(++counter) + ";\n";
}

const char* const kBroken = R"(extern "C" __global__ void broken(float* x, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = undefined_factor * x[i];
}
)";

const char* const kGoodThatWarns = R"(extern "C" __global__ void triple(float* x, unsigned n) {
  int unused = 7;
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = 3.0f * x[i];
}
)";

const char* const kTemplate = R"(namespace ops {
template <typename T, int Factor>
__global__ void scale(T* x, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * T(Factor) + T(1);
}
}  // namespace ops
)";

const char* const kBrokenTemplate = R"(namespace ops {
template <typename T, int Factor>
__global__ void scale(T* x, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * T(Factor) + T(1)
}
}  // namespace ops
)";

std::string cachedSource(int plus) {
  return R"(extern "C" __global__ void bump(float* x, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] + )" + std::to_string(plus) + R"(.0f;
}
)";
}

// The regular files directly in dir.
std::vector<std::string> filesIn(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec))
    if (entry.is_regular_file()) names.push_back(entry.path().filename().string());
  return names;
}

// How each file of a folder last came to be while the code under check ran: renamed into place, or
// created or written there. What the check itself does to the folder is read and set aside.
class FolderWatch {
 public:
  explicit FolderWatch(const std::string& dir) : dir_(dir) {
    fd_ = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (fd_ >= 0 && inotify_add_watch(fd_, dir.c_str(), IN_CREATE | IN_MODIFY | IN_MOVED_TO) < 0) close(fd_), fd_ = -1;
  }
  ~FolderWatch() {
    if (fd_ >= 0) close(fd_);
  }
  FolderWatch(const FolderWatch&) = delete;
  FolderWatch& operator=(const FolderWatch&) = delete;
  bool watching() const { return fd_ >= 0; }
  // After the code under check ran: what it did is noted.
  void noteTheirs() { read(true); }
  // After the check changed the folder itself: set aside.
  void setAsideOurs() { read(false); }
  // Files in the folder now whose last change by the code was not a rename into place.
  std::vector<std::string> writtenInPlace() {
    noteTheirs();
    std::vector<std::string> bad;
    for (const std::string& name : filesIn(dir_)) {
      const auto it = renamedIn_.find(name);
      if (it != renamedIn_.end() && !it->second) bad.push_back(name);
    }
    return bad;
  }

 private:
  void read(bool theirs) {
    if (fd_ < 0) return;
    alignas(inotify_event) char buf[65536];
    for (ssize_t got; (got = ::read(fd_, buf, sizeof buf)) > 0;)
      for (char* p = buf; p < buf + got;) {
        const auto* e = reinterpret_cast<const inotify_event*>(p);
        if (theirs && e->len > 0) renamedIn_[e->name] = (e->mask & IN_MOVED_TO) != 0;
        p += sizeof(inotify_event) + e->len;
      }
  }
  std::string dir_;
  int fd_ = -1;
  std::map<std::string, bool> renamedIn_;
};

}  // namespace

EXERCISE("compile-or-log", "A compile that hands back its log on failure and a loaded library on success",
         "nvrtcCreateProgram(&prog, source.c_str(), name.c_str(), 0, nullptr, nullptr) held by an object whose "
         "destructor calls nvrtcDestroyProgram; the option \"--gpu-architecture=sm_\" + std::to_string(10 * major + "
         "minor) from cuDeviceGetAttribute; keep what nvrtcCompileProgram returns instead of throwing on it, read the "
         "log (nvrtcGetProgramLogSize counts the NUL: resize to size - 1) whatever it returned, return on "
         "NVRTC_ERROR_COMPILATION, throw on any other failure, and only on NVRTC_SUCCESS get the cubin "
         "(nvrtcGetCUBINSize, nvrtcGetCUBIN) and cuLibraryLoadData it.") {
  TEST_CASE("R1 R2 R3 R4 R5 R6: a broken source gives back the log naming its line and no library; a good one a library that computes right, with its warning in the log; failures of NVRTC and of the load throw; no program left behind") {
    Lab lab;
    const long programsBefore = livePrograms();
    const wbx::Holdings before = wbx::holdings();
    ex19::Built bad;
    std::string thrown;
    try {
      bad = ex19::compileAndLoad(newToThisRun(kBroken), "broken.cu", lab.dev());
    } catch (const wb::NotDone&) {
      throw;
    } catch (const std::exception& e) {
      thrown = e.what();
    }
    Unload badLib{bad.library};
    const long programsAfterBad = livePrograms() - programsBefore;
    CHECK_MESSAGE(thrown.empty(), "compileAndLoad threw on a source that does not compile, so the caller never sees "
                                  "the log: " << thrown);
    CAPTURE(bad.log);
    CHECK(bad.library == nullptr);
    CHECK_MESSAGE(bad.log.find("broken.cu(3)") != std::string::npos,
                  "the log does not name broken.cu(3): was the program created with the name given?");
    CHECK_MESSAGE(bad.log.find('\0') == std::string::npos,
                  "the log holds a NUL character: nvrtcGetProgramLogSize counts the terminating NUL");
    CHECK_MESSAGE(programsAfterBad == 0, "the program of the source that did not compile was not destroyed");

    const ex19::Built good = ex19::compileAndLoad(newToThisRun(kGoodThatWarns), "triple.cu", lab.dev());
    Unload goodLib{good.library};
    const std::string heldAfterGood = wbx::holdings().differenceFrom(before);
    CAPTURE(good.log);
    REQUIRE(good.library != nullptr);
    CHECK_MESSAGE(good.log.find("warning") != std::string::npos,
                  "the warning NVRTC gave is not in the log: is the log read when the compile succeeds too?");
    CHECK_MESSAGE(good.log.find('\0') == std::string::npos, "the log holds a NUL character");
    CHECK_MESSAGE(livePrograms() == programsBefore, "the program of the good source was not destroyed");
    CAPTURE(heldAfterGood);
    CHECK_MESSAGE(heldAfterGood == "1 library more", "compileAndLoad holds something besides the library it returned");
    CUkernel triple = nullptr;
    REQUIRE(cuLibraryGetKernel(&triple, good.library, "triple") == CUDA_SUCCESS);
    CHECK(wrongValues<float>(triple, [](float v) { return 3.0f * v; }) == 0);
    int binaryVersion = 0;
    CU_CHECK(cuKernelGetAttribute(&binaryVersion, CU_FUNC_ATTRIBUTE_BINARY_VERSION, triple, lab.dev()));
    CAPTURE(binaryVersion);
    CHECK_MESSAGE(binaryVersion == lab.arch(), "the kernel was not compiled for dev's own architecture (sm_ and its "
                                               "compute capability): a cubin of another one runs, if at all, as that");

    const wbx::Holdings beforeFailures = wbx::holdings();
    failNextCompile = NVRTC_ERROR_OUT_OF_MEMORY;
    const bool threwOnCompile =
        threw([&] { Unload lib{ex19::compileAndLoad(newToThisRun(kGoodThatWarns), "triple.cu", lab.dev()).library}; });
    failNextCompile = NVRTC_SUCCESS;
    CHECK_MESSAGE(threwOnCompile, "nvrtcCompileProgram failed with NVRTC_ERROR_OUT_OF_MEMORY and compileAndLoad did "
                                  "not throw: only NVRTC_ERROR_COMPILATION is a compile error with a log to show");
    CHECK_MESSAGE(livePrograms() == programsBefore, "when nvrtcCompileProgram failed, the program was not destroyed");
    bool threwOnLoad = false, loadFired = false;
    {
      wbx::FailCall fail("cuLibraryLoadData", CUDA_ERROR_OUT_OF_MEMORY);
      threwOnLoad =
          threw([&] { Unload lib{ex19::compileAndLoad(newToThisRun(kGoodThatWarns), "triple.cu", lab.dev()).library}; });
      loadFired = fail.fired();
    }
    CHECK_MESSAGE(loadFired, "compileAndLoad did not load the cubin with cuLibraryLoadData");
    CHECK_MESSAGE(threwOnLoad, "cuLibraryLoadData failed and compileAndLoad did not throw");
    CHECK_MESSAGE(livePrograms() == programsBefore, "when cuLibraryLoadData failed, the program was not destroyed");
    const std::string heldAfterFailures = wbx::holdings().differenceFrom(beforeFailures);
    CAPTURE(heldAfterFailures);
    CHECK_MESSAGE(heldAfterFailures == "", "a failed compileAndLoad left something held");
  }
}

EXERCISE("template-instances", "Template kernels instantiated and found by name expression",
         "Call nvrtcAddNameExpression(prog, e.c_str()) for each expression before nvrtcCompileProgram (that is "
         "what instantiates the template), and after it nvrtcGetLoweredName(prog, e.c_str(), &lowered) with the "
         "identical string; copy lowered into a std::string at once, before nvrtcDestroyProgram. cuLibraryGetKernel "
         "takes the lowered name (\"_ZN3ops5scaleIfLi2EEEvPT_j\"), never the expression (\"ops::scale<float, 2>\"). "
         "Hold the program and the library in objects that give them back, so that a throw does too.") {
  TEST_CASE("R1 R2 R3 R4: two instances of a namespaced template with a constant parameter: the lowered names NVRTC gives, in the order asked, each kernel computing x * Factor + 1 in its type; a source that does not compile and a failed lookup throw, holding nothing") {
    Lab lab;
    const std::vector<std::string> expressions = {"ops::scale<float, 2>", "ops::scale<double, 3>"};
    const long programsBefore = livePrograms();
    const wbx::Holdings before = wbx::holdings();
    const ex19::Instances got = ex19::instantiate(newToThisRun(kTemplate), expressions, lab.dev());
    Unload lib{got.library};
    const long programsLeft = livePrograms() - programsBefore;
    const std::string held = wbx::holdings().differenceFrom(before);
    const wb::Compiled want =
        nvrtc(newToThisRun(kTemplate), {"--gpu-architecture=sm_" + std::to_string(lab.arch())}, expressions);
    CAPTURE(want.log);
    REQUIRE(want.result == NVRTC_SUCCESS);
    REQUIRE(got.library != nullptr);
    REQUIRE(got.kernels.size() == 2);
    REQUIRE(got.loweredNames.size() == 2);
    // A kernel of another type would read and write past the buffer: the names first.
    REQUIRE(got.loweredNames[0] == want.lowered[0]);
    REQUIRE(got.loweredNames[1] == want.lowered[1]);
    CHECK(wrongValues<float>(got.kernels[0], [](float v) { return v * 2.0f + 1.0f; }) == 0);
    CHECK(wrongValues<double>(got.kernels[1], [](double v) { return v * 3.0 + 1.0; }) == 0);
    CHECK_MESSAGE(programsLeft == 0, "instantiate did not destroy its program");
    CAPTURE(held);
    CHECK_MESSAGE(held == "1 library more", "instantiate holds something besides the library it returned");

    const wbx::Holdings beforeFailures = wbx::holdings();
    const bool threwOnBroken = threw([&] {
      const ex19::Instances none = ex19::instantiate(newToThisRun(kBrokenTemplate), expressions, lab.dev());
      Unload unload{none.library};
    });
    CHECK_MESSAGE(threwOnBroken, "instantiate did not throw for a source that does not compile");
    CHECK_MESSAGE(livePrograms() == programsBefore, "the program of a source that did not compile was not destroyed");
    bool threwOnLookup = false, lookupFired = false;
    {
      wbx::FailCall fail("cuLibraryGetKernel", CUDA_ERROR_NOT_FOUND, 2);
      threwOnLookup = threw([&] {
        const ex19::Instances some = ex19::instantiate(newToThisRun(kTemplate), expressions, lab.dev());
        Unload unload{some.library};
      });
      lookupFired = fail.fired();
    }
    CHECK_MESSAGE(lookupFired, "instantiate did not look the second instance up with cuLibraryGetKernel");
    CHECK_MESSAGE(threwOnLookup, "cuLibraryGetKernel failed for the second instance and instantiate did not throw");
    CHECK_MESSAGE(livePrograms() == programsBefore, "when a lookup failed, the program was not destroyed");
    const std::string heldAfterFailures = wbx::holdings().differenceFrom(beforeFailures);
    CAPTURE(heldAfterFailures);
    CHECK_MESSAGE(heldAfterFailures == "", "a failed instantiate left its library loaded");
  }
}

EXERCISE("disk-cache", "A disk cache of compiled kernels keyed by everything that changes the cubin",
         "Spell every field of CompileInputs into one key string, each with its length (the options one by one), "
         "name the file by a hash of it (std::hash<std::string> will do), and store the key itself in the file "
         "before the cubin: a hit is a file whose stored key equals this key and whose cubin passes "
         "wb::imageProblem(data, size, wb::ImageKind::Cubin). mkdir(dir, 0700); if it exists, lstat it and use it "
         "only when st_uid == geteuid() and no S_IWGRP or S_IWOTH. Write with mkstemp(dir + \"/.partial-XXXXXX\") "
         "and std::rename it into place.") {
  TEST_CASE("R1 R2 R3 R4 R5 R7 R8: a private folder is made; the same inputs hit without compiling; changing any one field misses; entries arrive by rename; swapped or damaged entries are compiled again; a folder its group or others can write to is not used, one of mode 0755 is") {
    Lab lab;
    int nvrtcMajor = 0, nvrtcMinor = 0, driver = 0;
    REQUIRE(nvrtcVersion(&nvrtcMajor, &nvrtcMinor) == NVRTC_SUCCESS);
    CU_CHECK(cuDriverGetVersion(&driver));
    const int arch = lab.arch();
    const std::vector<std::string> archOption = {"--gpu-architecture=sm_" + std::to_string(arch)};
    ex19::CompileInputs base;
    base.source = cachedSource(1);
    base.options = archOption;
    base.ccMajor = arch / 10, base.ccMinor = arch % 10;
    base.nvrtcMajor = nvrtcMajor, base.nvrtcMinor = nvrtcMinor;
    Dl_info where{};
    base.nvrtcBuild = dladdr(reinterpret_cast<void*>(&nvrtcVersion), &where) && where.dli_fname ? where.dli_fname : "nvrtc";
    base.driverVersion = driver;

    // The compiler: counts its calls, and returns NVRTC's cubin of the source (the options it is
    // given may be made up; what a cache must not confuse is decided by the calls).
    unsigned calls = 0;
    std::map<std::string, std::vector<char>> cubins;
    const ex19::Compiler compiler = [&](const ex19::CompileInputs& in) {
      ++calls;
      if (!cubins.count(in.source)) {
        const wb::Compiled r = nvrtc(in.source, archOption);
        REQUIRE(r.result == NVRTC_SUCCESS);
        cubins[in.source] = r.cubin;
      }
      return cubins[in.source];
    };
    wb::ScratchDir scratch;
    const std::string dir = scratch.path() + "/cache";
    const std::vector<char> first = ex19::cachedCompile(dir, base, compiler);
    struct stat made {};
    const bool exists = stat(dir.c_str(), &made) == 0 && S_ISDIR(made.st_mode);
    const unsigned mode = exists ? static_cast<unsigned>(made.st_mode & 0777) : 0;
    CAPTURE(mode);
    REQUIRE_MESSAGE(exists, "cachedCompile did not make the folder it was given");
    CHECK_MESSAGE(mode == 0700, "the folder was not made private (mode 0700): others could plant entries in it");
    CHECK(calls == 1);
    CHECK_MESSAGE(first == cubins[base.source], "the first call did not return what the compiler made");

    FolderWatch watch(dir);
    if (!watch.watching()) MESSAGE("inotify is not available here: how entries are written is not checked");
    const std::vector<char> again = ex19::cachedCompile(dir, base, compiler);
    CHECK_MESSAGE(calls == 1, "the same inputs called the compiler again: no hit");
    CHECK(again == first);

    struct Change {
      std::string what;
      ex19::CompileInputs inputs;
    };
    std::vector<Change> changes;
    const auto change = [&](const std::string& what, const auto& edit) {
      Change c{what, base};
      edit(c.inputs);
      changes.push_back(c);
    };
    change("the source", [&](ex19::CompileInputs& in) { in.source = cachedSource(2); });
    change("one option more", [](ex19::CompileInputs& in) { in.options.push_back("--fmad=false"); });
    change("two options -DA=1 and -DB=2", [](ex19::CompileInputs& in) { in.options.insert(in.options.end(), {"-DA=1", "-DB=2"}); });
    change("the one option \"-DA=1 -DB=2\"", [](ex19::CompileInputs& in) { in.options.push_back("-DA=1 -DB=2"); });
    change("the compute capability's minor", [](ex19::CompileInputs& in) { in.ccMinor += 1; });
    change("compute capability 1.10", [](ex19::CompileInputs& in) { in.ccMajor = 1, in.ccMinor = 10; });
    change("compute capability 11.0", [](ex19::CompileInputs& in) { in.ccMajor = 11, in.ccMinor = 0; });
    change("NVRTC's minor version", [](ex19::CompileInputs& in) { in.nvrtcMinor += 1; });
    change("NVRTC's build", [](ex19::CompileInputs& in) { in.nvrtcBuild += " (patched)"; });
    change("the driver version", [](ex19::CompileInputs& in) { in.driverVersion += 10; });
    for (const Change& c : changes) {
      const std::string what = c.what;
      CAPTURE(what);
      const unsigned before = calls;
      ex19::cachedCompile(dir, c.inputs, compiler);
      CHECK_MESSAGE(calls == before + 1, "changing it alone did not miss: the key leaves it out, or spells two "
                                         "inputs the same");
    }
    const unsigned beforeBase = calls;
    CHECK(ex19::cachedCompile(dir, base, compiler) == first);
    CHECK_MESSAGE(calls == beforeBase, "the first inputs missed after the others: did an entry overwrite theirs?");
    const std::vector<std::string> inPlace = watch.writtenInPlace();
    const std::string inPlaceNames = inPlace.empty() ? "" : inPlace.front();
    CAPTURE(inPlaceNames);
    CHECK_MESSAGE(inPlace.empty(), "an entry was written in place, where a reader can find it half-written: write it "
                                   "under another name and rename it");

    // Two entries alone in a folder, their contents swapped: each file now holds the other's key.
    {
      const std::string swapDir = scratch.path() + "/swap";
      ex19::CompileInputs other = base;
      other.source = cachedSource(2);
      ex19::cachedCompile(swapDir, base, compiler);
      ex19::cachedCompile(swapDir, other, compiler);
      const std::vector<std::string> two = filesIn(swapDir);
      REQUIRE_MESSAGE(two.size() == 2, "two entries did not leave two files: each entry is one file in the folder");
      const std::string a = swapDir + "/" + two[0], b = swapDir + "/" + two[1], t = swapDir + "/swapping";
      REQUIRE(std::rename(a.c_str(), t.c_str()) == 0);
      REQUIRE(std::rename(b.c_str(), a.c_str()) == 0);
      REQUIRE(std::rename(t.c_str(), b.c_str()) == 0);
      const unsigned before = calls;
      const std::vector<char> forBase = ex19::cachedCompile(swapDir, base, compiler);
      const std::vector<char> forOther = ex19::cachedCompile(swapDir, other, compiler);
      CHECK_MESSAGE(forBase == cubins[base.source], "an entry holding another key was served: compare the key "
                                                    "stored in the entry, not only the file name");
      CHECK_MESSAGE(forOther == cubins[other.source], "an entry holding another key was served");
      CHECK_MESSAGE(calls == before + 2, "with the entries swapped, each set of inputs must compile again");
    }

    for (const std::string& name : filesIn(dir)) {
      const std::filesystem::path path = std::filesystem::path(dir) / name;
      std::filesystem::resize_file(path, std::filesystem::file_size(path) / 2);
    }
    watch.setAsideOurs();
    const unsigned beforeDamage = calls;
    std::vector<char> healed;
    CHECK_NOTHROW(healed = ex19::cachedCompile(dir, base, compiler));
    CHECK_MESSAGE(calls == beforeDamage + 1, "a damaged entry was served instead of compiled again");
    CHECK(healed == first);
    const std::vector<std::string> rewrittenInPlace = watch.writtenInPlace();
    CHECK_MESSAGE(rewrittenInPlace.empty(), "the damaged entry was rewritten in place: write it under another name "
                                            "and rename it");
    REQUIRE(wb::imageProblem(healed.data(), healed.size(), wb::ImageKind::Cubin) == "");
    CUlibrary library = nullptr;
    REQUIRE(cuLibraryLoadData(&library, healed.data(), nullptr, nullptr, 0, nullptr, nullptr, 0) == CUDA_SUCCESS);
    Unload unload{library};
    CUkernel bump = nullptr;
    REQUIRE(cuLibraryGetKernel(&bump, library, "bump") == CUDA_SUCCESS);
    CHECK(wrongValues<float>(bump, [](float v) { return v + 1.0f; }) == 0);

    // A folder that anyone may write to, and one that its group may: nothing read from either,
    // nothing written to either.
    for (const unsigned openMode : {0777u, 0770u}) {
      CAPTURE(openMode);
      const std::string open = scratch.path() + "/open-" + std::to_string(openMode);
      REQUIRE(mkdir(open.c_str(), 0700) == 0);
      REQUIRE(chmod(open.c_str(), openMode) == 0);
      const unsigned beforeOpen = calls;
      ex19::cachedCompile(open, base, compiler);
      ex19::cachedCompile(open, base, compiler);
      const size_t leftInOpen = filesIn(open).size();
      CHECK_MESSAGE(calls == beforeOpen + 2, "a folder others (or its group) can write to was used as a cache: "
                                             "whoever writes there chooses the code you load");
      CHECK_MESSAGE(leftInOpen == 0, "cachedCompile wrote into a folder others (or its group) can write to");
    }

    // An existing folder of this user that only it can write to is the cache's, 0700 or not.
    const std::string readable = scratch.path() + "/readable";
    REQUIRE(mkdir(readable.c_str(), 0700) == 0);
    REQUIRE(chmod(readable.c_str(), 0755) == 0);
    const unsigned beforeReadable = calls;
    CHECK(ex19::cachedCompile(readable, base, compiler) == first);
    CHECK(ex19::cachedCompile(readable, base, compiler) == first);
    CHECK_MESSAGE(calls == beforeReadable + 1, "an existing folder of mode 0755 (nobody else can write to it) was not "
                                               "used: only write permission for the group or others makes it unsafe");
  }
}
