// The checks of lesson 25's exercises (lessons/25-core-dumps/exercises.cpp). The core-dump settings
// are the process's: each check puts back every global setting it changes (and the settings of the
// caller's context, where a wrong answer could change them), and destroys the contexts it creates.
// No check faults a kernel: what a fault then writes is the lesson's (its children). The reads of a
// setting are noted while a case records them, to see whether a size was asked with value NULL
// first, as cuda.h says. Each case's name begins with the requirements it verifies.
#include "check.hpp"
#include "scratch.hpp"
#include "25-core-dumps/exercises.hpp"

#include <cstdlib>
#include <cstring>
#include <atomic>
#include <exception>
#include <filesystem>
#include <ostream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

// Counted here, and failed on purpose: the global setting and the per-context one, and their reads
// (CUDA 12.1).
#if CUDA_VERSION >= 12010
WBX_INTERPOSE(cuCoredumpSetAttributeGlobal, (CUcoredumpSettings attrib, void* value, size_t* size),
              (attrib, value, size))
WBX_INTERPOSE(cuCoredumpSetAttribute, (CUcoredumpSettings attrib, void* value, size_t* size), (attrib, value, size))

namespace {
// One read of a setting: global or the current context's, which attribute, whether value was NULL
// (the size asked), the size handed in and the size the driver put back.
struct Read {
  bool global = false;
  CUcoredumpSettings which{};
  bool sizeAsked = false;
  size_t sizeIn = 0, sizeOut = 0;
  CUresult rc = CUDA_SUCCESS;
};
std::atomic<bool> recording{false};  // set only around a call of the code under check, in this thread
std::vector<Read> reads;

using GetFn = CUresult(CUDAAPI*)(CUcoredumpSettings, void*, size_t*);
CUresult noted(bool global, GetFn real, CUcoredumpSettings attrib, void* value, size_t* size) {
  Read r;
  r.global = global;
  r.which = attrib;
  r.sizeAsked = value == nullptr;
  r.sizeIn = size ? *size : 0;
  r.rc = real ? real(attrib, value, size) : CUDA_ERROR_NOT_FOUND;
  r.sizeOut = size ? *size : 0;
  if (recording) reads.push_back(r);
  return r.rc;
}

// The reads made while it lives.
struct Recording {
  Recording() {
    reads.clear();
    recording = true;
  }
  ~Recording() { recording = false; }
  Recording(const Recording&) = delete;
  Recording& operator=(const Recording&) = delete;
};

// Whether the size of `which` was asked (value NULL, answered) in the scope given.
bool sizeAsked(bool global, CUcoredumpSettings which) {
  for (const Read& r : reads)
    if (r.global == global && r.which == which && r.sizeAsked && r.rc == CUDA_SUCCESS) return true;
  return false;
}

// Whether `which` was read into exactly the bytes the driver said it expects: a read with a value
// whose size is what the size asked before it put back.
bool readInExpectedSize(bool global, CUcoredumpSettings which) {
  size_t expected = 0;
  bool asked = false;
  for (const Read& r : reads) {
    if (r.global != global || r.which != which || r.rc != CUDA_SUCCESS) continue;
    if (r.sizeAsked) {
      asked = true;
      expected = r.sizeOut;
    } else if (asked && r.sizeIn == expected) {
      return true;
    }
  }
  return false;
}
}  // namespace

extern "C" CUresult CUDAAPI cuCoredumpGetAttributeGlobal(CUcoredumpSettings attrib, void* value, size_t* size) {
  static const auto real = reinterpret_cast<GetFn>(wbx::detail::real("cuCoredumpGetAttributeGlobal"));
  if (const CUresult injected = wbx::detail::enter("cuCoredumpGetAttributeGlobal")) return injected;
  return noted(true, real, attrib, value, size);
}

extern "C" CUresult CUDAAPI cuCoredumpGetAttribute(CUcoredumpSettings attrib, void* value, size_t* size) {
  static const auto real = reinterpret_cast<GetFn>(wbx::detail::real("cuCoredumpGetAttribute"));
  if (const CUresult injected = wbx::detail::enter("cuCoredumpGetAttribute")) return injected;
  return noted(false, real, attrib, value, size);
}
#endif

namespace {

// Device 0's primary context, current for the case.
struct Ctx {
  wbt::RetainedPrimary primary{(wbt::initDriver(), wbt::device(0))};
  wbt::Pushed pushed{primary.get()};
};

// A number attribute of the global settings (or the current context's), as the driver sizes it.
#if CUDA_VERSION >= 12050
long long coredumpNumber(bool global, CUcoredumpSettings which) {
  size_t size = 0;
  CU_CHECK(global ? cuCoredumpGetAttributeGlobal(which, nullptr, &size) : cuCoredumpGetAttribute(which, nullptr, &size));
  REQUIRE(size <= sizeof(long long));
  long long value = 0;
  CU_CHECK(global ? cuCoredumpGetAttributeGlobal(which, &value, &size) : cuCoredumpGetAttribute(which, &value, &size));
  return value;
}

std::string coredumpFile(bool global) {
  size_t size = 0;  // asked with value NULL: the size the driver expects
  CU_CHECK(global ? cuCoredumpGetAttributeGlobal(CU_COREDUMP_FILE, nullptr, &size)
                  : cuCoredumpGetAttribute(CU_COREDUMP_FILE, nullptr, &size));
  std::vector<char> value(std::max<size_t>(size, 1024), '\0');
  if (size == 0) size = value.size();
  CU_CHECK(global ? cuCoredumpGetAttributeGlobal(CU_COREDUMP_FILE, value.data(), &size)
                  : cuCoredumpGetAttribute(CU_COREDUMP_FILE, value.data(), &size));
  return std::string(value.data(), strnlen(value.data(), value.size()));
}

// A number attribute set in the global settings (or the current context's), in as many bytes as the
// driver expects for it (asked with value NULL).
void putNumber(bool global, CUcoredumpSettings which, long long value) {
  size_t size = 0;
  CU_CHECK(global ? cuCoredumpGetAttributeGlobal(which, nullptr, &size) : cuCoredumpGetAttribute(which, nullptr, &size));
  REQUIRE(size > 0);
  REQUIRE(size <= sizeof value);  // the low bytes, on a little-endian machine
  CU_CHECK(global ? cuCoredumpSetAttributeGlobal(which, &value, &size) : cuCoredumpSetAttribute(which, &value, &size));
}

void putFile(bool global, const std::string& path) {
  std::vector<char> file(path.begin(), path.end());
  file.push_back('\0');
  size_t size = file.size();
  CU_CHECK(global ? cuCoredumpSetAttributeGlobal(CU_COREDUMP_FILE, file.data(), &size)
                  : cuCoredumpSetAttribute(CU_COREDUMP_FILE, file.data(), &size));
}

// What one scope's settings say, as the check reads them itself.
struct Settings {
  long long enable = 0, flags = 0;
  std::string file;
};

std::ostream& operator<<(std::ostream& out, const Settings& s) {
  return out << "{on exception " << s.enable << ", file " << s.file << ", flags " << s.flags << "}";
}

Settings globalSettings() {
  return {coredumpNumber(true, CU_COREDUMP_ENABLE_ON_EXCEPTION), coredumpNumber(true, CU_COREDUMP_GENERATION_FLAGS),
          coredumpFile(true)};
}

// A context's own settings, read with it pushed (the stack as it was afterwards).
Settings settingsOf(CUcontext ctx) {
  wbt::Pushed current(ctx);
  return {coredumpNumber(false, CU_COREDUMP_ENABLE_ON_EXCEPTION), coredumpNumber(false, CU_COREDUMP_GENERATION_FLAGS),
          coredumpFile(false)};
}

bool operator==(const Settings& a, const Settings& b) {
  return (a.enable != 0) == (b.enable != 0) && a.flags == b.flags && a.file == b.file;
}

// What the learner's readDumpSettings returned, in the check's terms.
Settings asSettings(const ex25::DumpSettings& s) {
  return {s.onException ? 1 : 0, static_cast<long long>(s.flags), s.file};
}

// One scope's settings (the global ones, or a context's own) as they were made, put back at scope
// exit: the settings are the process's, and the checks that follow start from them. Nothing here may
// throw, so a setting the driver refuses to take back is left as it is.
class SettingsKept {
 public:
  SettingsKept() : kept_(globalSettings()) {}
  // A context's own: the caller's, which a wrong answer may change in place of the one it was given.
  explicit SettingsKept(CUcontext ctx) : ctx_(ctx), kept_(settingsOf(ctx)) {}
  ~SettingsKept() {
    if (ctx_ && cuCtxPushCurrent(ctx_) != CUDA_SUCCESS) return;
    const bool global = ctx_ == nullptr;
    const auto get = global ? cuCoredumpGetAttributeGlobal : cuCoredumpGetAttribute;
    const auto set = global ? cuCoredumpSetAttributeGlobal : cuCoredumpSetAttribute;
    const auto put = [&](CUcoredumpSettings which, long long value) {
      size_t size = 0;
      if (get(which, nullptr, &size) == CUDA_SUCCESS && size <= sizeof value)
        set(which, &value, &size);  // the low bytes, on a little-endian machine
    };
    put(CU_COREDUMP_GENERATION_FLAGS, kept_.flags);
    std::vector<char> file(kept_.file.begin(), kept_.file.end());
    file.push_back('\0');
    size_t size = file.size();
    set(CU_COREDUMP_FILE, file.data(), &size);
    put(CU_COREDUMP_ENABLE_ON_EXCEPTION, kept_.enable);
    CUcontext popped = nullptr;
    if (ctx_) cuCtxPopCurrent(&popped);
  }
  SettingsKept(const SettingsKept&) = delete;
  SettingsKept& operator=(const SettingsKept&) = delete;

 private:
  CUcontext ctx_ = nullptr;
  Settings kept_;
};

// A context made on device 0 for the case, not left current; destroyed at scope exit.
struct Job {
  wbt::OwnedContext owned{wbt::device(0)};
  Job() {
    CUcontext popped = nullptr;
    CU_CHECK(cuCtxPopCurrent(&popped));
  }
  CUcontext get() const { return owned.get(); }
};

// How often the code under check called what could change a stack or a core-dump setting.
long callsThatTouch() {
  long n = 0;
  for (const char* f : {"cuCtxPushCurrent", "cuCtxPopCurrent", "cuCtxSetCurrent", "cuCoredumpSetAttribute",
                        "cuCoredumpSetAttributeGlobal", "cuCoredumpGetAttribute", "cuCoredumpGetAttributeGlobal"})
    n += wbx::calls(f);
  return n;
}

// Why the core-dump settings cannot be checked in this process, or "". The driver is started
// first, so that even a run that skips every case has made a CUDA call: compute-sanitizer (the
// sanitize target) reports a process that made none as an error of its own.
std::string whyUncheckable() {
  wbt::initDriver();
  if (wb::underSanitizer())
    return "under compute-sanitizer, which the CUDA-GDB manual says dumps are not supported with";
  for (const wb::EnvVariable& v : wb::cudaEnvironmentVariables())
    if (std::strstr(v.name, "COREDUMP") && std::getenv(v.name))
      return std::string(v.name) + " is set, and cuda.h says a core-dump variable set before CUDA initializes "
             "takes precedence over the program's settings";
  return "";
}
#endif


}  // namespace

EXERCISE("crash-capture", "A process set up to leave a lightweight GPU core dump behind",
         "Three cuCoredumpSetAttributeGlobal calls, each through CU_CHECK: CU_COREDUMP_GENERATION_FLAGS set to "
         "CU_COREDUMP_LIGHTWEIGHT_FLAGS (| CU_COREDUMP_SKIP_ABORT when keepRunning), CU_COREDUMP_FILE with its NUL, "
         "CU_COREDUMP_ENABLE_ON_EXCEPTION on; sizes asked with value NULL.") {
  TEST_CASE("R1 R2 R3 R4 R5: captureGpuCrashes turns dumps on globally, names the file and sets exactly the lightweight flags, SKIP_ABORT only when asked, each number's size asked first") {
#if CUDA_VERSION >= 12050
    if (const std::string why = whyUncheckable(); !why.empty()) throw wbx::Skipped(why);
    Ctx ctx;
    SettingsKept kept;
    const long perContextBefore = wbx::calls("cuCoredumpSetAttribute");
    const std::string paths[] = {"/tmp/exercise25-a.nvcudmp", "/tmp/exercise25-b.nvcudmp", "/tmp/exercise25-c.nvcudmp"};
    const bool keepRunning[] = {false, true, false};
    for (int i = 0; i < 3; ++i) {
      bool enableSized = false, flagsSized = false;
      {
        Recording record;
        ex25::captureGpuCrashes(paths[i], keepRunning[i]);
        enableSized = sizeAsked(true, CU_COREDUMP_ENABLE_ON_EXCEPTION);
        flagsSized = sizeAsked(true, CU_COREDUMP_GENERATION_FLAGS);
      }
      const long long expected = CU_COREDUMP_LIGHTWEIGHT_FLAGS | (keepRunning[i] ? CU_COREDUMP_SKIP_ABORT : 0);
      INFO("call " << i + 1 << ": path " << paths[i] << ", keepRunning " << keepRunning[i]);
      CHECK(coredumpNumber(true, CU_COREDUMP_ENABLE_ON_EXCEPTION) != 0);
      CHECK(coredumpFile(true) == paths[i]);
      CHECK(coredumpNumber(true, CU_COREDUMP_GENERATION_FLAGS) == expected);
      CHECK_MESSAGE(enableSized, "CU_COREDUMP_ENABLE_ON_EXCEPTION's size was not asked (value NULL) before it was set");
      CHECK_MESSAGE(flagsSized, "CU_COREDUMP_GENERATION_FLAGS's size was not asked (value NULL) before it was set");
    }
    // No per-context call: the ledger says so. What the current context's own settings read after a
    // global change is driver 580's behaviour (cuda.h promises only that a context takes the global
    // settings when it is created), so the check does not assert it.
    CHECK(wbx::calls("cuCoredumpSetAttribute") == perContextBefore);
#else
    throw wbx::Skipped("this build's CUDA header predates CU_COREDUMP_GENERATION_FLAGS (CUDA 12.5)");
#endif
  }

  TEST_CASE("R6: when any of its calls fails (a setting, or a size asked), captureGpuCrashes throws") {
#if CUDA_VERSION >= 12050
    if (const std::string why = whyUncheckable(); !why.empty()) throw wbx::Skipped(why);
    Ctx ctx;
    SettingsKept kept;
    struct Failing {
      const char* call;
      unsigned nth;
    };
    // Three settings, and the sizes of the two numbers asked before them.
    const Failing plan[] = {{"cuCoredumpSetAttributeGlobal", 1}, {"cuCoredumpSetAttributeGlobal", 2},
                            {"cuCoredumpSetAttributeGlobal", 3}, {"cuCoredumpGetAttributeGlobal", 1},
                            {"cuCoredumpGetAttributeGlobal", 2}};
    for (const Failing& f : plan) {
      bool threw = false, fired = false;
      {
        wbx::FailCall fail(f.call, CUDA_ERROR_INVALID_VALUE, f.nth);
        try {
          ex25::captureGpuCrashes("/tmp/exercise25-failing.nvcudmp", true);
        } catch (const wb::NotDone&) {
          throw;
        } catch (const std::exception&) {
          threw = true;
        }
        fired = fail.fired();
      }
      INFO("the failing call: " << f.call << " number " << f.nth);
      CHECK(fired);
      CHECK(threw);
    }
#else
    throw wbx::Skipped("this build's CUDA header predates CU_COREDUMP_GENERATION_FLAGS (CUDA 12.5)");
#endif
  }
}

EXERCISE("context-dump", "A dump file of its own for one job's context",
         "Throw std::invalid_argument for an empty path first. Then push context with an RAII guard (its destructor "
         "pops, so a throw leaves the stack as found) and make three cuCoredumpSetAttribute calls, each through "
         "CU_CHECK: CU_COREDUMP_ENABLE_ON_EXCEPTION on, CU_COREDUMP_FILE with its NUL, CU_COREDUMP_GENERATION_FLAGS "
         "CU_COREDUMP_LIGHTWEIGHT_FLAGS | CU_COREDUMP_SKIP_ABORT; each number's size asked first with "
         "cuCoredumpGetAttribute(which, NULL, &size) in that context. Never the global call.") {
  TEST_CASE("R2 R3 R4 R5 R6: dumpContextTo gives each context its own file and lightweight, non-aborting dumps, each number's size asked first, and changes nothing else") {
#if CUDA_VERSION >= 12050
    if (const std::string why = whyUncheckable(); !why.empty()) throw wbx::Skipped(why);
    Ctx ctx;  // the caller's own context, current
    SettingsKept callersKept(ctx.primary.get());
    SettingsKept kept;
    Job a, b;
    const std::string pathA = "/tmp/exercise25-job-a.nvcudmp", pathB = "/tmp/exercise25-job-b.nvcudmp";
    const Settings callers = settingsOf(ctx.primary.get()), global = globalSettings();
    const std::vector<CUcontext> stack = wbx::contextStack();
    const long globalCalls = wbx::calls("cuCoredumpSetAttributeGlobal");
    bool enableSized = false, flagsSized = false;
    {
      Recording record;
      ex25::dumpContextTo(a.get(), pathA);
      enableSized = sizeAsked(false, CU_COREDUMP_ENABLE_ON_EXCEPTION);
      flagsSized = sizeAsked(false, CU_COREDUMP_GENERATION_FLAGS);
    }
    const std::vector<CUcontext> afterA = wbx::contextStack();
    ex25::dumpContextTo(b.get(), pathB);
    const std::vector<CUcontext> afterB = wbx::contextStack();
    CHECK_MESSAGE(enableSized, "CU_COREDUMP_ENABLE_ON_EXCEPTION's size was not asked (value NULL) before it was set");
    CHECK_MESSAGE(flagsSized, "CU_COREDUMP_GENERATION_FLAGS's size was not asked (value NULL) before it was set");
    CHECK_MESSAGE(afterA == stack, "after dumpContextTo(A, ...) the caller's context stack is not as it was");
    CHECK_MESSAGE(afterB == stack, "after dumpContextTo(B, ...) the caller's context stack is not as it was");
    const long long expected = CU_COREDUMP_LIGHTWEIGHT_FLAGS | CU_COREDUMP_SKIP_ABORT;
    const struct {
      std::string name;
      CUcontext ctx;
      const std::string& path;
    } jobs[] = {{"A", a.get(), pathA}, {"B", b.get(), pathB}};
    for (const auto& job : jobs) {
      const Settings own = settingsOf(job.ctx);
      INFO("context " << job.name << "'s own settings: " << own);
      CHECK_MESSAGE(own.enable != 0, "dumps on exception are not on in this context");
      CHECK_MESSAGE(own.file == job.path, "this context's CU_COREDUMP_FILE is not the path it was given");
      CHECK_MESSAGE(own.flags == expected,
                    "the flags are not exactly CU_COREDUMP_LIGHTWEIGHT_FLAGS | CU_COREDUMP_SKIP_ABORT");
    }
    const Settings callersAfter = settingsOf(ctx.primary.get()), globalAfter = globalSettings();
    INFO("the caller's context: " << callers << " before, " << callersAfter << " after");
    INFO("the global settings: " << global << " before, " << globalAfter << " after");
    CHECK_MESSAGE(callersAfter == callers, "the caller's own context's settings changed");
    CHECK_MESSAGE(globalAfter == global, "the global settings changed");
    CHECK_MESSAGE(wbx::calls("cuCoredumpSetAttributeGlobal") == globalCalls, "cuCoredumpSetAttributeGlobal was called");
#else
    throw wbx::Skipped("this build's CUDA header predates CU_COREDUMP_GENERATION_FLAGS (CUDA 12.5)");
#endif
  }

  TEST_CASE("R2 R7: when a call of dumpContextTo fails (a setting, a size asked, the push), it throws the driver's error and leaves the caller's stack as it found it") {
#if CUDA_VERSION >= 12050
    if (const std::string why = whyUncheckable(); !why.empty()) throw wbx::Skipped(why);
    Ctx ctx;
    SettingsKept callersKept(ctx.primary.get());
    SettingsKept kept;
    Job a;
    const std::vector<CUcontext> stack = wbx::contextStack();
    struct Failing {
      const char* call;
      unsigned nth;
    };
    // Three settings, and the sizes of the two numbers asked before them.
    const Failing plan[] = {{"cuCoredumpSetAttribute", 1}, {"cuCoredumpSetAttribute", 2}, {"cuCoredumpSetAttribute", 3},
                            {"cuCoredumpGetAttribute", 1}, {"cuCoredumpGetAttribute", 2}};
    for (const Failing& f : plan) {
      bool threw = false, fired = false;
      std::vector<CUcontext> stackAfter;
      {
        wbx::FailCall fail(f.call, CUDA_ERROR_NOT_PERMITTED, f.nth);
        try {
          ex25::dumpContextTo(a.get(), "/tmp/exercise25-failing.nvcudmp");
        } catch (const wb::DriverError& e) {
          threw = e.code() == CUDA_ERROR_NOT_PERMITTED;
        }
        fired = fail.fired();
        stackAfter = wbx::contextStack();
      }
      INFO("the failing call: " << f.call << " number " << f.nth);
      CHECK_MESSAGE(fired, "dumpContextTo made fewer than three settings, or asked fewer than two sizes");
      CHECK_MESSAGE(threw, "the failed call was not thrown as a wb::DriverError with its code");
      CHECK_MESSAGE(stackAfter == stack, "after the failure the caller's context stack is not as it was");
    }
    bool threw = false, fired = false;
    {
      wbx::FailCall fail("cuCtxPushCurrent", CUDA_ERROR_INVALID_CONTEXT);
      try {
        ex25::dumpContextTo(a.get(), "/tmp/exercise25-failing.nvcudmp");
      } catch (const wb::DriverError& e) {
        threw = e.code() == CUDA_ERROR_INVALID_CONTEXT;
      }
      fired = fail.fired();
    }
    const std::vector<CUcontext> stackAfter = wbx::contextStack();  // (it pushes: after the FailCall)
    if (fired) {
      INFO("the failing call: cuCtxPushCurrent");
      CHECK_MESSAGE(threw, "the failed push was not thrown as a wb::DriverError with its code");
      CHECK_MESSAGE(stackAfter == stack, "after the failed push the caller's context stack is not as it was");
    } else {
      MESSAGE("dumpContextTo did not call cuCtxPushCurrent: its failure was not tried");
    }
#else
    throw wbx::Skipped("this build's CUDA header predates CU_COREDUMP_GENERATION_FLAGS (CUDA 12.5)");
#endif
  }

  TEST_CASE("R1: an empty path: dumpContextTo throws std::invalid_argument before any call") {
#if CUDA_VERSION >= 12050
    if (const std::string why = whyUncheckable(); !why.empty()) throw wbx::Skipped(why);
    Ctx ctx;
    SettingsKept callersKept(ctx.primary.get());
    SettingsKept kept;
    Job a;
    const std::vector<CUcontext> stack = wbx::contextStack();
    const long before = callsThatTouch();
    bool invalidArgument = false;
    std::string other = "nothing";
    try {
      ex25::dumpContextTo(a.get(), "");
    } catch (const wb::NotDone&) {
      throw;
    } catch (const std::invalid_argument&) {
      invalidArgument = true;
    } catch (const std::exception& e) {
      other = e.what();
    }
    const long calls = callsThatTouch() - before;
    INFO("what it threw instead: " << other);
    CHECK_MESSAGE(invalidArgument, "dumpContextTo(A, \"\") did not throw std::invalid_argument");
    CHECK_MESSAGE(calls == 0, "dumpContextTo(A, \"\") pushed, popped or set a context, or called a core-dump function");
    CHECK_MESSAGE(wbx::contextStack() == stack, "the caller's context stack is not as it was");
#else
    throw wbx::Skipped("this build's CUDA header predates CU_COREDUMP_GENERATION_FLAGS (CUDA 12.5)");
#endif
  }
}

EXERCISE("dump-settings", "Where a context's dump would go, read back",
         "For a context: push it with an RAII guard, then per attribute cuCoredumpGetAttribute(which, NULL, &size), "
         "a buffer of exactly size bytes, cuCoredumpGetAttribute(which, buffer, &size), each through CU_CHECK. "
         "For nullptr the same with cuCoredumpGetAttributeGlobal and no push. A number: its size bytes copied into "
         "the low bytes of a zeroed unsigned long long (the machines are little-endian); the file: the string up "
         "to its NUL.") {
  TEST_CASE("R1 R2 R3 R4 R5: readDumpSettings reads a context's own settings, or the global ones, as the driver holds them, each into the size it asked") {
#if CUDA_VERSION >= 12050
    if (const std::string why = whyUncheckable(); !why.empty()) throw wbx::Skipped(why);
    Ctx ctx;  // the caller's own context, current
    SettingsKept kept;
    Job c;
    // A job's folder that makes its path long: nine folders of 70 characters in a scratch folder.
    wb::ScratchDir scratch;
    std::string folder = scratch.path();
    for (int i = 0; i < 9; ++i)
      folder += "/job-" + std::to_string(i) + "-" + std::string(64, static_cast<char>('a' + i));
    std::filesystem::create_directories(folder);
    const std::string longPath = folder + "/job-0042.nvcudmp", globalPath = scratch.path() + "/global.nvcudmp";
    REQUIRE(longPath.size() > 600);
    REQUIRE(longPath.size() <= 1023);  // cuda.h: "String of up to 1023 characters"
    putFile(true, globalPath);
    putNumber(true, CU_COREDUMP_GENERATION_FLAGS, CU_COREDUMP_SKIP_LOCAL_MEMORY | CU_COREDUMP_SKIP_CONSTBANK_MEMORY);
    const long long jobFlags = CU_COREDUMP_SKIP_GLOBAL_MEMORY | CU_COREDUMP_SKIP_SHARED_MEMORY | CU_COREDUMP_SKIP_ABORT;
    {
      wbt::Pushed current(c.get());
      putNumber(false, CU_COREDUMP_ENABLE_ON_EXCEPTION, 1);
      putFile(false, longPath);
      putNumber(false, CU_COREDUMP_GENERATION_FLAGS, jobFlags);
    }
    const Settings job = settingsOf(c.get()), callers = settingsOf(ctx.primary.get()), global = globalSettings();
    INFO("C's settings as the check reads them: " << job);
    REQUIRE_MESSAGE((job.enable != 0 && job.file == longPath && job.flags == jobFlags),
                    "the driver did not keep the settings the check gave C");
    REQUIRE_MESSAGE(global.file == globalPath, "the driver did not keep the global file the check set");
    const std::vector<CUcontext> stack = wbx::contextStack();

    Settings readJob;
    bool jobSized = true;
    {
      Recording record;
      readJob = asSettings(ex25::readDumpSettings(c.get()));
      for (CUcoredumpSettings which : {CU_COREDUMP_ENABLE_ON_EXCEPTION, CU_COREDUMP_FILE, CU_COREDUMP_GENERATION_FLAGS})
        jobSized = jobSized && readInExpectedSize(false, which);
    }
    const std::vector<CUcontext> afterJob = wbx::contextStack();
    INFO("readDumpSettings(C): " << readJob);
    CHECK_MESSAGE(readJob.enable != 0, "C's dumps on exception read as off");
    CHECK_MESSAGE(readJob.file == longPath, "C's file read back is not its path (over 600 characters)");
    CHECK_MESSAGE(readJob.flags == jobFlags, "C's generation flags read back differ");
    CHECK_MESSAGE(afterJob == stack, "after readDumpSettings(C) the caller's context stack is not as it was");
    CHECK_MESSAGE(jobSized, "an attribute of C was not read into the size asked for it first (value NULL)");

    const Settings readCallers = asSettings(ex25::readDumpSettings(ctx.primary.get()));
    INFO("the caller's context: " << callers << "; readDumpSettings of it: " << readCallers);
    CHECK_MESSAGE(readCallers == callers, "readDumpSettings of the caller's context differs from its settings");
    CHECK_MESSAGE(wbx::contextStack() == stack, "after readDumpSettings(caller's) the stack is not as it was");

    Settings readGlobal;
    bool globalSized = true;
    {
      Recording record;
      readGlobal = asSettings(ex25::readDumpSettings(nullptr));
      for (CUcoredumpSettings which : {CU_COREDUMP_ENABLE_ON_EXCEPTION, CU_COREDUMP_FILE, CU_COREDUMP_GENERATION_FLAGS})
        globalSized = globalSized && readInExpectedSize(true, which);
    }
    INFO("the global settings: " << global << "; readDumpSettings(nullptr): " << readGlobal);
    CHECK_MESSAGE(globalSized, "a global attribute was not read into the size asked for it first (value NULL)");
    CHECK_MESSAGE(readGlobal == global, "readDumpSettings(nullptr) differs from the global settings");
    CHECK_MESSAGE(wbx::contextStack() == stack, "after readDumpSettings(nullptr) the stack is not as it was");

    // From a thread with no current context (a new thread has none).
    Settings readAlone;
    std::string threadError;
    std::thread alone([&] {
      try {
        readAlone = asSettings(ex25::readDumpSettings(nullptr));
      } catch (const wb::NotDone&) {
        threadError = "not done";
      } catch (const std::exception& e) {
        threadError = e.what();
      }
    });
    alone.join();
    if (threadError == "not done") wb::notDone("ex25::readDumpSettings");
    INFO("from a thread with no context: " << readAlone << (threadError.empty() ? "" : ", threw: ") << threadError);
    CHECK_MESSAGE(threadError.empty(), "readDumpSettings(nullptr) threw in a thread with no current context");
    CHECK_MESSAGE(readAlone == global,
                  "readDumpSettings(nullptr) from a thread with no context differs from the global settings");
#else
    throw wbx::Skipped("this build's CUDA header predates CU_COREDUMP_GENERATION_FLAGS (CUDA 12.5)");
#endif
  }

  TEST_CASE("R1 R6: when a call of readDumpSettings fails, it throws the driver's error and leaves the caller's stack as it found it") {
#if CUDA_VERSION >= 12050
    if (const std::string why = whyUncheckable(); !why.empty()) throw wbx::Skipped(why);
    Ctx ctx;
    Job c;
    const std::vector<CUcontext> stack = wbx::contextStack();
    unsigned failed = 0;
    for (unsigned nth = 1; nth <= 16; ++nth) {
      bool threw = false, fired = false;
      std::vector<CUcontext> stackAfter;
      {
        wbx::FailCall fail("cuCoredumpGetAttribute", CUDA_ERROR_NOT_PERMITTED, nth);
        try {
          ex25::readDumpSettings(c.get());
        } catch (const wb::DriverError& e) {
          threw = e.code() == CUDA_ERROR_NOT_PERMITTED;
        }
        fired = fail.fired();
        stackAfter = wbx::contextStack();
      }
      if (!fired) break;
      ++failed;
      INFO("the failing call: cuCoredumpGetAttribute number " << nth);
      CHECK_MESSAGE(threw, "the failed call was not thrown as a wb::DriverError with its code");
      CHECK_MESSAGE(stackAfter == stack, "after the failure the caller's context stack is not as it was");
    }
    CHECK_MESSAGE(failed >= 3, "readDumpSettings(C) made fewer than three cuCoredumpGetAttribute calls");

    unsigned failedGlobal = 0;
    for (unsigned nth = 1; nth <= 16; ++nth) {
      bool threw = false, fired = false;
      {
        wbx::FailCall fail("cuCoredumpGetAttributeGlobal", CUDA_ERROR_INVALID_VALUE, nth);
        try {
          ex25::readDumpSettings(nullptr);
        } catch (const wb::DriverError& e) {
          threw = e.code() == CUDA_ERROR_INVALID_VALUE;
        }
        fired = fail.fired();
      }
      if (!fired) break;
      ++failedGlobal;
      INFO("the failing call: cuCoredumpGetAttributeGlobal number " << nth << " of readDumpSettings(nullptr)");
      CHECK_MESSAGE(threw, "the failed call was not thrown as a wb::DriverError with its code");
      CHECK_MESSAGE(wbx::contextStack() == stack, "after the failure the caller's context stack is not as it was");
    }
    CHECK_MESSAGE(failedGlobal >= 3,
                  "readDumpSettings(nullptr) made fewer than three cuCoredumpGetAttributeGlobal calls");

    bool threw = false, fired = false;
    {
      wbx::FailCall fail("cuCtxPushCurrent", CUDA_ERROR_INVALID_CONTEXT);
      try {
        ex25::readDumpSettings(c.get());
      } catch (const wb::DriverError& e) {
        threw = e.code() == CUDA_ERROR_INVALID_CONTEXT;
      }
      fired = fail.fired();
    }
    const std::vector<CUcontext> stackAfter = wbx::contextStack();  // (it pushes: after the FailCall)
    if (fired) {
      INFO("the failing call: cuCtxPushCurrent");
      CHECK_MESSAGE(threw, "the failed push was not thrown as a wb::DriverError with its code");
      CHECK_MESSAGE(stackAfter == stack, "after the failed push the caller's context stack is not as it was");
    } else {
      MESSAGE("readDumpSettings did not call cuCtxPushCurrent: its failure was not tried");
    }
#else
    throw wbx::Skipped("this build's CUDA header predates CU_COREDUMP_GENERATION_FLAGS (CUDA 12.5)");
#endif
  }
}
