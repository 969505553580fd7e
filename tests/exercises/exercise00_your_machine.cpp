// The checks of lesson 00's exercises (lessons/00-your-machine/exercises.cpp). cuda-usable is asked
// about real libraries (the driver, the build's copy of the toolkit's stub, a path where nothing
// is, a library that is no driver) and in real processes (one that sees no device, one forked
// after cuInit), since what it classifies is what the loader and the driver answer there.
// jit-cache only reads and sets environment variables and folders: the check sets them in its own
// process, in scratch folders, and puts every variable back as it was. Each case's name begins with
// the requirements it verifies.
#include "check.hpp"
#include "scratch.hpp"
#include "00-your-machine/exercises.hpp"

#include <dlfcn.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <stdexcept>
#include <string>

#ifndef WORKBOOK_STUB_DRIVER_DIR  // lessons/CMakeLists.txt defines it where the build has the stub
#define WORKBOOK_STUB_DRIVER_DIR ""
#endif

namespace {

namespace fs = std::filesystem;

const char* kindName(ex00::Cuda c) {
  switch (c) {
    case ex00::Cuda::Usable: return "Usable";
    case ex00::Cuda::NoDriver: return "NoDriver";
    case ex00::Cuda::StubDriver: return "StubDriver";
    case ex00::Cuda::NoDevice: return "NoDevice";
    case ex00::Cuda::ForkedAfterInit: return "ForkedAfterInit";
    case ex00::Cuda::Unusable: return "Unusable";
  }
  return "?";
}

// Whether text names the number on its own: "100" in "returned 100" but not in "1000" or "v100".
bool namesNumber(const std::string& text, int number) {
  return std::regex_search(text, std::regex("(^|[^0-9A-Za-z_.])" + std::to_string(number) + "([^0-9]|$)"));
}

// Whether why names the call that failed: cuInit, for every failure the check provokes.
bool namesCuInit(const std::string& why) { return why.find("cuInit") != std::string::npos; }

// What dlerror() says of a library that cannot be opened, asked here with cudaUsable's flags: the
// text why must carry (for a path where no file is, the same at every ask).
std::string dlopenError(const std::string& library) {
  void* lib = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib) {
    dlclose(lib);
    return "";
  }
  const char* why = dlerror();
  return why ? why : "";
}

// ---- cuda-usable's children ------------------------------------------------------------------------

const char* const kNoDeviceCase = "child: cudaUsable where CUDA_VISIBLE_DEVICES hides every device";

// This binary again, running one test case with the environment changed (wbx::runInChild's, with
// variables of the check's choosing). A child whose learner code is not done says so, and the
// parent reports the exercise not done.
wbx::ChildResult runChildWith(const std::string& testCase, const std::vector<std::string>& env) {
  std::vector<std::string> all = {"WORKBOOK_CHILD=1", "WORKBOOK_EXERCISE_RESULTS"};
  all.insert(all.end(), env.begin(), env.end());
  const wb::ProcessEnd end = wb::runProcess({wb::selfPath(), "--test-case=" + testCase, "--no-version"}, all, 60);
  const size_t at = end.output.find("NOT DONE: ");
  if (at != std::string::npos) throw wb::NotDone("cudaUsable");
  return {end.signal != 0, end.timedOut, end.code, end.output};
}

// What cudaUsable answered in a process forked after this one's cuInit, as the forked child sent it.
struct ForkedAnswer {
  int kind = -1;  // static_cast<int>(ex00::Cuda), -1 when the child said nothing, -2 when not done
  bool namesThree = false, namesCall = false;
  std::string why;
};

ForkedAnswer askForked() {
  CU_CHECK(cuInit(0));
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  std::fflush(nullptr);  // nothing buffered here is written twice
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    alarm(10);  // a child that hangs is ended
    struct {
      int kind;
      int namesThree;
      int namesCall;
      char why[200];
    } sent{-1, 0, 0, {}};
    try {
      const ex00::CudaVerdict v = ex00::cudaUsable();
      sent.kind = static_cast<int>(v.cuda);
      sent.namesThree = namesNumber(v.why, 3);
      sent.namesCall = namesCuInit(v.why);
      std::snprintf(sent.why, sizeof sent.why, "%s", v.why.c_str());
    } catch (const wb::NotDone&) {
      sent.kind = -2;
    } catch (...) {
      sent.kind = -3;
    }
    _exit(write(fds[1], &sent, sizeof sent) == static_cast<ssize_t>(sizeof sent) ? 0 : 1);
  }
  close(fds[1]);
  struct {
    int kind;
    int namesThree;
    int namesCall;
    char why[200];
  } got{-1, 0, 0, {}};
  const ssize_t n = read(fds[0], &got, sizeof got);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  ForkedAnswer a;
  if (n == static_cast<ssize_t>(sizeof got)) a.kind = got.kind, a.namesThree = got.namesThree != 0, a.namesCall = got.namesCall != 0, a.why = got.why;
  if (a.kind == -2) throw wb::NotDone("cudaUsable");
  return a;
}

// ---- jit-cache's environment ---------------------------------------------------------------------

// The three cache variables and HOME, set for a case and put back as they were at its end.
class CacheEnvironment {
 public:
  CacheEnvironment() {
    for (const char* name : kNames) {
      const char* v = std::getenv(name);
      saved_.push_back({name, v != nullptr, v ? v : ""});
    }
  }
  ~CacheEnvironment() {
    for (const auto& s : saved_) s.had ? setenv(s.name, s.value.c_str(), 1) : unsetenv(s.name);
  }
  CacheEnvironment(const CacheEnvironment&) = delete;
  CacheEnvironment& operator=(const CacheEnvironment&) = delete;
  // Sets (value) or removes (nullptr) one of them.
  void set(const char* name, const char* value) { value ? setenv(name, value, 1) : unsetenv(name); }
  void set(const char* name, const std::string& value) { setenv(name, value.c_str(), 1); }

 private:
  static constexpr const char* kNames[] = {"CUDA_CACHE_PATH", "CUDA_CACHE_MAXSIZE", "CUDA_CACHE_DISABLE", "HOME"};
  struct Saved {
    const char* name;
    bool had;
    std::string value;
  };
  std::vector<Saved> saved_;
};

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "(unset)";
}

void writeFile(const std::string& path) { std::ofstream(path) << "a file where a folder would have to be"; }

// A scratch folder holding a regular file, a-file: a cache folder under it can never be made.
struct CacheScratch {
  wb::ScratchDir dir;
  std::string blocked = dir.path() + "/a-file/cache", fallback = dir.path() + "/fallback/jit";
  CacheScratch() { writeFile(dir.path() + "/a-file"); }
};

}  // namespace

EXERCISE("cuda-usable", "Whether this process can use CUDA at all, and why not",
         "void* lib = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL); null: NoDriver, with dlerror(). "
         "dlsym(lib, \"cuInit\") and dlsym(lib, \"cuDeviceGetCount\"), cast to CUresult(*)(unsigned) and "
         "CUresult(*)(int*); missing: Unusable. Switch on cuInit(0): 34 STUB_LIBRARY, 100 NO_DEVICE, 3 "
         "NOT_INITIALIZED (forked), anything else Unusable; put std::to_string(rc) in why. Then count the devices.") {
  TEST_CASE("R1 R2 R3 R7 R9 R10: this machine's driver is Usable; a path where no file is, NoDriver naming the path and dlerror()'s text; the toolkit's stub, StubDriver naming cuInit and 34; a library that is no driver, Unusable; none of them throws") {
    wbt::initDriver();
    const ex00::CudaVerdict here = ex00::cudaUsable();
    CAPTURE(here.why);
    CHECK_MESSAGE(here.cuda == ex00::Cuda::Usable, (std::string("this machine's driver gave ") + kindName(here.cuda)));

    wb::ScratchDir nothing;
    const std::string missing = nothing.path() + "/libcuda.so.1";
    const ex00::CudaVerdict none = ex00::cudaUsable(missing);
    CAPTURE(none.why);
    CHECK_MESSAGE(none.cuda == ex00::Cuda::NoDriver, (std::string("a library path where no file is gave ") + kindName(none.cuda)));
    CHECK_MESSAGE(none.why.find(missing) != std::string::npos, "why does not name the library it could not open");
    const std::string openError = dlopenError(missing);
    CAPTURE(openError);
    CHECK_MESSAGE((!openError.empty() && none.why.find(openError) != std::string::npos),
                  "why does not carry dlerror()'s text, which says why the library could not be opened");

    const std::string stubDir = WORKBOOK_STUB_DRIVER_DIR;
    REQUIRE_MESSAGE(!stubDir.empty(), "this build found no stub libcuda in the toolkit");
    const ex00::CudaVerdict stub = ex00::cudaUsable(stubDir + "/libcuda.so.1");
    CAPTURE(stub.why);
    CHECK_MESSAGE(stub.cuda == ex00::Cuda::StubDriver, (std::string("the toolkit's stub gave ") + kindName(stub.cuda)));
    CHECK_MESSAGE(namesNumber(stub.why, CUDA_ERROR_STUB_LIBRARY), "why does not name cuInit's CUresult, 34");
    CHECK_MESSAGE(namesCuInit(stub.why), "why does not name the call that failed, cuInit");

    const ex00::CudaVerdict math = ex00::cudaUsable("libm.so.6");
    CAPTURE(math.why);
    CHECK_MESSAGE(math.cuda == ex00::Cuda::Unusable, (std::string("libm.so.6, which has no cuInit, gave ") + kindName(math.cuda)));
  }

  TEST_CASE(kNoDeviceCase * doctest::skip(!wbt::inChild())) {
    const ex00::CudaVerdict v = ex00::cudaUsable();
    CAPTURE(v.why);
    CHECK_MESSAGE(v.cuda == ex00::Cuda::NoDevice, (std::string("with CUDA_VISIBLE_DEVICES empty it gave ") + kindName(v.cuda)));
    CHECK_MESSAGE(namesNumber(v.why, CUDA_ERROR_NO_DEVICE), "why does not name cuInit's CUresult, 100");
    CHECK_MESSAGE(namesCuInit(v.why), "why does not name the call that failed, cuInit");
  }

  TEST_CASE("R4 R9: in a process that sees no device (CUDA_VISIBLE_DEVICES empty): NoDevice, naming cuInit and 100") {
    const wbx::ChildResult child = runChildWith(kNoDeviceCase, {"CUDA_VISIBLE_DEVICES="});
    CAPTURE(child.output);
    CHECK_MESSAGE(!child.crashed, "cudaUsable crashed the process or hung");
    CHECK_MESSAGE(child.code == 0, "the child's checks failed (its output above)");
  }

  TEST_CASE("R5 R9 R10: in a process forked after cuInit: ForkedAfterInit, naming cuInit and 3 (driver 580's answer there, observed), without throwing") {
    const ForkedAnswer a = askForked();
    CAPTURE(a.why);
    REQUIRE_MESSAGE(a.kind != -1, "the forked child sent no answer: cudaUsable crashed it or hung");
    REQUIRE_MESSAGE(a.kind != -3, "cudaUsable threw: it must answer, not throw");
    CHECK_MESSAGE(a.kind == static_cast<int>(ex00::Cuda::ForkedAfterInit),
                  (std::string("it gave ") + kindName(static_cast<ex00::Cuda>(a.kind))));
    CHECK_MESSAGE(a.namesThree, "why does not name cuInit's CUresult, 3");
    CHECK_MESSAGE(a.namesCall, "why does not name the call that failed, cuInit");
  }
}

EXERCISE("jit-cache", "A JIT cache the process can write, chosen before cuInit",
         "Read CUDA_CACHE_MAXSIZE with std::strtoull (64 bits). CUDA_CACHE_DISABLE exactly \"1\": return enabled = "
         "false. The folder: CUDA_CACHE_PATH if set and not empty, else home + \"/.nv/ComputeCache\" (HOME, else "
         "getpwuid(getuid())->pw_dir). Walk up from the folder to the first path that exists; it must be a directory "
         "with access(path, W_OK | X_OK) == 0. Otherwise std::filesystem::create_directories(fallback), then "
         "setenv(\"CUDA_CACHE_PATH\", fallback, 1).") {
  TEST_CASE("R2 R4: CUDA_CACHE_PATH that exists, or is not created yet under a writable folder, stays where it is") {
    CacheEnvironment e;
    CacheScratch s;
    const std::string exists = s.dir.path() + "/cache", later = s.dir.path() + "/not/yet/cache";
    fs::create_directories(exists);
    e.set("CUDA_CACHE_DISABLE", nullptr);
    e.set("CUDA_CACHE_PATH", exists);
    const ex00::JitCacheSetup a = ex00::prepareJitCache(s.fallback);
    CHECK(a.enabled);
    CHECK(a.folder == exists);
    CHECK_FALSE(a.moved);
    e.set("CUDA_CACHE_PATH", later);
    const ex00::JitCacheSetup b = ex00::prepareJitCache(s.fallback);
    CHECK(b.folder == later);
    CHECK_MESSAGE(!b.moved, "a cache folder not created yet, under a folder that can be written, was moved: the driver creates it");
    CHECK_MESSAGE(env("CUDA_CACHE_PATH") == later, "CUDA_CACHE_PATH was changed though the folder could be used");
    CHECK_FALSE(fs::exists(s.fallback));
  }

  TEST_CASE("R4 R5: CUDA_CACHE_PATH under a regular file, even one that may be executed, moves to the fallback: created, and CUDA_CACHE_PATH naming it") {
    CacheEnvironment e;
    CacheScratch s;
    e.set("CUDA_CACHE_DISABLE", nullptr);
    e.set("CUDA_CACHE_PATH", s.blocked);
    const ex00::JitCacheSetup m = ex00::prepareJitCache(s.fallback);
    CHECK(m.enabled);
    CHECK(m.moved);
    CHECK(m.folder == s.fallback);
    CHECK_MESSAGE(fs::is_directory(s.fallback), "the fallback folder was not created");
    CHECK_MESSAGE(env("CUDA_CACHE_PATH") == s.fallback, "CUDA_CACHE_PATH does not name the fallback: the driver would not use it");

    // A regular file with every permission: access(W_OK | X_OK) allows it, and it is still no directory.
    CacheScratch t;
    const std::string tool = t.dir.path() + "/a-tool";
    writeFile(tool);
    REQUIRE(chmod(tool.c_str(), 0755) == 0);
    e.set("CUDA_CACHE_PATH", tool + "/cache");
    const ex00::JitCacheSetup x = ex00::prepareJitCache(t.fallback);
    CHECK_MESSAGE(x.moved, "the nearest path that exists is a regular file that may be executed: still no directory to make the cache in");
    CHECK(x.folder == t.fallback);
    CHECK(env("CUDA_CACHE_PATH") == t.fallback);
  }

  TEST_CASE("R3 R4 R5: no CUDA_CACHE_PATH, or an empty one: under HOME, a HOME under a regular file moved to the fallback, and where the password database puts the home when HOME is empty or unset") {
    CacheEnvironment e;
    CacheScratch s;
    const std::string home = s.dir.path() + "/home";
    fs::create_directories(home);
    e.set("CUDA_CACHE_DISABLE", nullptr);
    e.set("CUDA_CACHE_PATH", nullptr);
    e.set("HOME", home);
    const ex00::JitCacheSetup a = ex00::prepareJitCache(s.fallback);
    CHECK(a.folder == home + "/.nv/ComputeCache");
    CHECK_FALSE(a.moved);
    e.set("CUDA_CACHE_PATH", "");
    const ex00::JitCacheSetup empty = ex00::prepareJitCache(s.fallback);
    CHECK_MESSAGE(empty.folder == home + "/.nv/ComputeCache", "an empty CUDA_CACHE_PATH is not a folder");
    // The story's case: a home the cache cannot be made in is judged as CUDA_CACHE_PATH would be.
    e.set("HOME", s.blocked);
    const ex00::JitCacheSetup blockedHome = ex00::prepareJitCache(s.fallback);
    CHECK_MESSAGE(blockedHome.moved, "a home under a regular file cannot hold the cache: it must move too");
    CHECK(blockedHome.folder == s.fallback);
    CHECK(env("CUDA_CACHE_PATH") == s.fallback);
    e.set("CUDA_CACHE_PATH", nullptr);  // the move set it: the asks below are about the home again
    const passwd* user = getpwuid(getuid());
    REQUIRE(user);
    const std::string expected = std::string(user->pw_dir) + "/.nv/ComputeCache";
    e.set("HOME", "");
    const ex00::JitCacheSetup emptyHome = ex00::prepareJitCache(s.fallback);
    e.set("CUDA_CACHE_PATH", nullptr);  // in case the password database's home moved it
    e.set("HOME", nullptr);
    const ex00::JitCacheSetup b = ex00::prepareJitCache(s.fallback);
    CAPTURE(emptyHome.folder);
    CAPTURE(b.folder);
    if (access(user->pw_dir, W_OK | X_OK) == 0) {  // where this user may write its home, the cache stays there
      CHECK_MESSAGE(emptyHome.folder == expected, "an empty HOME is no home: the home is the password database's");
      CHECK_FALSE(emptyHome.moved);
      CHECK_MESSAGE(b.folder == expected, "with HOME unset the home is the password database's");
      CHECK_FALSE(b.moved);
    }
  }

  TEST_CASE("R1 R7: CUDA_CACHE_DISABLE=1 changes nothing, even where the folder cannot be written, and the limit is still read; CUDA_CACHE_DISABLE=0 is not off") {
    CacheEnvironment e;
    CacheScratch s;
    e.set("CUDA_CACHE_PATH", s.blocked);
    e.set("CUDA_CACHE_DISABLE", "1");
    e.set("CUDA_CACHE_MAXSIZE", "6442450944");
    const ex00::JitCacheSetup off = ex00::prepareJitCache(s.fallback);
    CHECK_FALSE(off.enabled);
    CHECK_MESSAGE(off.maxBytes == 6442450944ull, "maxBytes is CUDA_CACHE_MAXSIZE whether the cache is on or off");
    CHECK_FALSE(off.moved);
    CHECK(env("CUDA_CACHE_PATH") == s.blocked);
    CHECK_FALSE(fs::exists(s.fallback));
    e.set("CUDA_CACHE_DISABLE", "0");
    const ex00::JitCacheSetup on = ex00::prepareJitCache(s.fallback);
    CHECK_MESSAGE(on.enabled, "CUDA_CACHE_DISABLE=0 leaves the cache on");
    CHECK(on.moved);
  }

  TEST_CASE("R7: CUDA_CACHE_MAXSIZE of 6 GiB is read whole; unset, the limit is the documented 1 GiB") {
    CacheEnvironment e;
    CacheScratch s;
    e.set("CUDA_CACHE_DISABLE", nullptr);
    e.set("CUDA_CACHE_PATH", s.dir.path());
    e.set("CUDA_CACHE_MAXSIZE", "6442450944");
    const ex00::JitCacheSetup six = ex00::prepareJitCache(s.fallback);
    e.set("CUDA_CACHE_MAXSIZE", nullptr);
    const ex00::JitCacheSetup unset = ex00::prepareJitCache(s.fallback);
    CHECK_MESSAGE(six.maxBytes == 6442450944ull, "6 GiB did not come back whole: read it in 64 bits");
    CHECK(unset.maxBytes == 1073741824ull);
  }

  TEST_CASE("R6: a fallback that cannot be created either: std::runtime_error, and CUDA_CACHE_PATH as it was") {
    CacheEnvironment e;
    CacheScratch s;
    e.set("CUDA_CACHE_DISABLE", nullptr);
    e.set("CUDA_CACHE_PATH", s.blocked);
    const std::string impossible = s.dir.path() + "/a-file/fallback";
    std::string outcome = "returned";
    try {
      ex00::prepareJitCache(impossible);
    } catch (const wb::NotDone&) {
      throw;
    } catch (const std::runtime_error&) {
      outcome = "std::runtime_error";
    } catch (const std::exception& ex) {
      outcome = std::string("other: ") + ex.what();
    }
    CHECK(outcome == "std::runtime_error");
    CHECK_MESSAGE(env("CUDA_CACHE_PATH") == s.blocked, "CUDA_CACHE_PATH was changed to a fallback that does not exist");
  }
}
