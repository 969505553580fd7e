// Lesson 25: core dumps. What a faulting kernel leaves behind, and how to read it.
//
// What you learn: a faulting kernel can leave a GPU core dump, the GPU's side of a crash: which
// kernel, which thread, which instruction and source line, and the exception. The environment
// turns it on (CUDA_ENABLE_COREDUMP_ON_EXCEPTION, read at cuInit), after which the driver aborts
// the process once the dump is written; or the program does (cuCoredumpSetAttributeGlobal,
// cuCoredumpSetAttribute), per context, lightweight, and without the abort, so that the process
// keeps its error and can report it. cuda-gdb opens a dump at the faulting kernel and its line.
//
// Every fault, and every setting the driver reads at cuInit, is in a child process: this program
// started again with --child <what>, with a time limit. The parent never faults.
//
// APIs: cuCoredumpSetAttributeGlobal, cuCoredumpGetAttributeGlobal, cuCoredumpSetAttribute,
//       cuCoredumpGetAttribute
// Run:  ctest -R lesson25   (or build/lessons/lesson25-core-dumps)
#include "process.hpp"
#include "scratch.hpp"
#include "workbook.hpp"

#include <dlfcn.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <future>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

constexpr unsigned kChildSeconds = 60;  // no child may take longer: a hang ends in a message

// One line per call: "  <what>: <NAME> (<code>)". The tests read these lines back.
CUresult say(const char* what, CUresult rc) {
  std::printf("  %s: %s (%d)\n", what, wb::errorName(rc).c_str(), static_cast<int>(rc));
  std::fflush(stdout);
  return rc;
}

std::vector<std::string> linesOf(const std::string& text) {
  std::vector<std::string> lines;
  std::stringstream ss(text);
  for (std::string line; std::getline(ss, line);) lines.push_back(line);
  return lines;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The monotonic clock in nanoseconds: one clock for every process of the machine, so a child's
// stamp and its parent's can be subtracted.
long long monotonicNs() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000000000LL + t.tv_nsec;
}

// A context of device 0, current (its primary one, or one created with the flags given), and a
// kernel of an image by name. Nothing gives them back: only the faulting children take them, and a
// child that faulted ends without cleaning up (every call would fail, lesson 10), so its exit takes all.
struct Setup {
  CUdevice dev = 0;
  CUcontext context = nullptr;
  CUlibrary library = nullptr;
  explicit Setup(const char* image = nullptr, bool created = false, unsigned flags = 0) {
    CU_CHECK(cuInit(0));
    CU_CHECK(cuDeviceGet(&dev, 0));
    if (created) {
      CU_CHECK(wb::createContext(&context, flags, dev));  // current once created
    } else {
      CU_CHECK(cuDevicePrimaryCtxRetain(&context, dev));
      CU_CHECK(cuCtxSetCurrent(context));
    }
    if (image)
      CU_CHECK(cuLibraryLoadFromFile(&library, wb::verifiedImagePath(image).c_str(), nullptr, nullptr, 0, nullptr,
                                     nullptr, 0));
  }
  CUfunction kernel(const char* name) const {
    CUkernel k = nullptr;
    CU_CHECK(cuLibraryGetKernel(&k, library, name));
    return reinterpret_cast<CUfunction>(k);
  }
};

// A fault must leave no CPU core file behind: RLIMIT_CORE 0 (the abort the driver raises after a GPU
// core dump would otherwise write one where the core pattern says).
void noCpuCoreFile() {
  rlimit none{0, 0};
  setrlimit(RLIMIT_CORE, &none);
}

// The faulting kernel stays resident after its store (kernels/faults.cu: a warp that exits first may
// leave the fault unreported and no dump), for at most kStayNs; with lesson 10's write_to, which
// exits at once, driver 580 reported no fault in step 1's child.
constexpr unsigned long long kStayNs = 3'000'000'000ull;

void fault(const Setup& s) {
  unsigned long long address = 0x10, stayNs = kStayNs;
  void* args[] = {&address, &stayNs};
  say("cuLaunchKernel(write_to_and_stay, 0x10)",
      cuLaunchKernel(s.kernel("write_to_and_stay"), 1, 1, 1, 1, 1, 1, 0, nullptr, args, nullptr));
  std::printf("  fault at %lld ns\n", monotonicNs());
  std::fflush(stdout);
}

//! [dump-env-child]
// In a child started with CUDA_ENABLE_COREDUMP_ON_EXCEPTION=1 and CUDA_COREDUMP_FILE: a fault, then
// the call that would report it.
int childDumpFromEnvironment() {
  noCpuCoreFile();
  Setup s("faults.fatbin");
  fault(s);
  say("cuCtxSynchronize", cuCtxSynchronize());
  return wb::kExitOk;
}
//! [dump-env-child]

#if CUDA_VERSION >= 12010
CUresult getAttribute(bool global, CUcoredumpSettings which, void* value, size_t* size) {
  return global ? cuCoredumpGetAttributeGlobal(which, value, size) : cuCoredumpGetAttribute(which, value, size);
}

CUresult setAttribute(bool global, CUcoredumpSettings which, void* value, size_t* size) {
  return global ? cuCoredumpSetAttributeGlobal(which, value, size) : cuCoredumpSetAttribute(which, value, size);
}

// A coredump attribute that is a number (a bool, or the generation flags), in as many bytes as the
// driver expects: asked with value NULL, the call reports that size (cuda.h). The type is the
// attribute's, whatever the scope, so the global call is asked.
CUresult setNumber(bool global, CUcoredumpSettings which, long long value) {
  size_t size = 0;
  const CUresult rc = cuCoredumpGetAttributeGlobal(which, nullptr, &size);
  if (rc != CUDA_SUCCESS) return rc;
  if (size == 0 || size > sizeof value) return CUDA_ERROR_INVALID_VALUE;
  unsigned char bytes[sizeof value] = {};
  std::memcpy(bytes, &value, size);  // the low bytes, on a little-endian machine
  return setAttribute(global, which, bytes, &size);
}

CUresult setText(bool global, CUcoredumpSettings which, const std::string& text) {
  std::vector<char> value(text.begin(), text.end());
  value.push_back('\0');
  size_t size = value.size();
  return setAttribute(global, which, value.data(), &size);
}

// What an attribute holds, for printing: a number, a path, or the error that refused the read.
std::string shown(bool global, CUcoredumpSettings which, bool isText) {
  size_t size = 0;
  CUresult rc = getAttribute(global, which, nullptr, &size);
  std::vector<char> value(std::max<size_t>(size, isText ? 1024 : sizeof(long long)), '\0');
  if (rc == CUDA_SUCCESS) {
    if (size == 0) size = value.size();
    rc = getAttribute(global, which, value.data(), &size);
  }
  if (rc != CUDA_SUCCESS) return wb::errorName(rc);
  if (isText) return std::string(value.data(), strnlen(value.data(), value.size()));
  long long n = 0;
  std::memcpy(&n, value.data(), std::min(size, sizeof n));
  return std::to_string(n);
}

//! [dump-api-child]
// In a child with no core-dump variable: the same fault, set up by the program. Globally, before any
// context: what a dump holds and that the process goes on. Per context: dump on exception, to a file
// of its own.
int childDumpFromApi(const std::string& folder) {
  noCpuCoreFile();
  CU_CHECK(cuInit(0));
#if CUDA_VERSION >= 12050
  const long long flags = CU_COREDUMP_LIGHTWEIGHT_FLAGS | CU_COREDUMP_SKIP_ABORT;
  CU_CHECK(setNumber(true, CU_COREDUMP_GENERATION_FLAGS, flags));
#else  // before 12.5: the two booleans that the generation flags replaced
  CU_CHECK(setNumber(true, CU_COREDUMP_LIGHTWEIGHT, 1));
  CU_CHECK(setNumber(true, CU_COREDUMP_TRIGGER_HOST, 0));
#endif
  CU_CHECK(setText(true, CU_COREDUMP_FILE, folder + "/global.nvcudmp"));
  (void)setText(true, CU_COREDUMP_PIPE, folder + "/pipe");  // so that a user trigger's pipe would land here
  // A context of its own, created after the global settings with the flag made for this:
  // CU_CTX_COREDUMP_ENABLE, dumps on exception for this context where none are enabled globally.
  Setup s("faults.fatbin", true, CU_CTX_COREDUMP_ENABLE);
  CU_CHECK(setNumber(false, CU_COREDUMP_ENABLE_ON_EXCEPTION, 1));
  CU_CHECK(setText(false, CU_COREDUMP_FILE, folder + "/context.nvcudmp"));
  say("cuCoredumpSetAttribute(CU_COREDUMP_ENABLE_USER_TRIGGER)",
      setNumber(false, CU_COREDUMP_ENABLE_USER_TRIGGER, 1));
  //! [dump-api-child]
  //! [dump-api-read]
  // What each scope holds now: the context took the global settings when it was created, then its own.
  const std::pair<const char*, CUcoredumpSettings> numbers[] = {
      {"ENABLE_ON_EXCEPTION", CU_COREDUMP_ENABLE_ON_EXCEPTION},
#if CUDA_VERSION >= 12050
      {"GENERATION_FLAGS", CU_COREDUMP_GENERATION_FLAGS},
#endif
  };
  for (const auto& [name, which] : numbers)
    for (bool global : {false, true})
      std::printf("  %s, %s: %s\n", global ? "globally" : "per context", name,
                  shown(global, which, false).c_str());
  for (bool global : {false, true})
    std::printf("  %s, FILE: %s\n", global ? "globally" : "per context",
                shown(global, CU_COREDUMP_FILE, true).c_str());
  //! [dump-api-read]
  //! [dump-api-fault]
  fault(s);
  say("cuCtxSynchronize", cuCtxSynchronize());
  std::printf("  returned at %lld ns\n", monotonicNs());
  return wb::kExitOk;  // the context is lost: no clean-up (lesson 10)
}
//! [dump-api-fault]
#endif  // CUDA_VERSION >= 12010

// cuda-gdb: beside the toolkit, in CUDA_HOME, or on PATH; "" when absent.
std::string findCudaGdb() {
  std::vector<std::string> candidates = {"/usr/local/cuda/bin/cuda-gdb"};
  if (const char* home = std::getenv("CUDA_HOME"))
    candidates.insert(candidates.begin(), std::string(home) + "/bin/cuda-gdb");
  if (const char* path = std::getenv("PATH")) {
    std::stringstream ss(path);
    for (std::string dir; std::getline(ss, dir, ':');) candidates.push_back(dir + "/cuda-gdb");
  }
  for (const auto& c : candidates)
    if (access(c.c_str(), X_OK) == 0) return c;
  return "";
}

std::string howItEnded(const wb::ProcessEnd& end) {
  if (end.timedOut) return "it hung and was ended after " + std::to_string(kChildSeconds) + " s";
  if (end.signal)
    return "killed by signal " + std::to_string(end.signal) + (end.signal == SIGABRT ? " (SIGABRT)" : "");
  return "exit code " + std::to_string(end.code);
}

// Every occurrence of from in text replaced by to: the scratch folder's random name, for output
// that reads the same in every run.
std::string replaced(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

long long fileBytes(const std::string& path) {
  struct stat info {};
  return stat(path.c_str(), &info) == 0 ? static_cast<long long>(info.st_size) : -1;
}

// A dump child's lines under tag, its end, its file and the time from its fault to end.
void report(const std::string& tag, const wb::ProcessEnd& end, long long endedNs, const std::string& folder,
            const std::vector<std::string>& files) {
  long long faultNs = 0, returnedNs = 0;
  for (const std::string& line : linesOf(end.output)) {
    if (std::sscanf(line.c_str(), "  fault at %lld ns", &faultNs) == 1) continue;
    if (std::sscanf(line.c_str(), "  returned at %lld ns", &returnedNs) == 1) continue;
    std::printf("[%s] %s\n", tag.c_str(), replaced(line, folder, "<scratch>").c_str());
  }
  std::printf("[%s] ended: %s\n", tag.c_str(), howItEnded(end).c_str());
  for (const std::string& f : files) {
    const long long bytes = fileBytes(folder + "/" + f);
    const std::string size = bytes < 0 ? "none" : std::to_string(bytes) + " bytes";
    std::printf("[%s] dump %s: %s\n", tag.c_str(), f.c_str(), size.c_str());
  }
  if (faultNs)
    std::printf("[%s] from the fault to %s: %.0f ms\n", tag.c_str(),
                returnedNs ? "cuCtxSynchronize's return" : "the process's end",
                ((returnedNs ? returnedNs : endedNs) - faultNs) / 1e6);
}

// cuda-gdb on a dump: the lines that say what faulted, and whether they name the exception, the
// kernel and a source line (and, where cuda-gdb's file is here, that line's text).
void openWithCudaGdb(const std::string& tag, const std::string& gdb, const std::string& dump,
                     const std::string& folder, const std::string& kernel) {
  const wb::Stopwatch clock;
  const wb::ProcessEnd end =
      wb::runProcess({gdb, "-nx", "-batch", "-ex", "target cudacore " + dump}, {}, 2 * kChildSeconds);
  static const std::regex where(R"(([^\s()]+\.cu):(\d+))"), folders(R"([^\s()]*/([^/\s()]+\.cu))");
  std::string exception, file, lineNumber;
  bool atFault = false;
  for (const std::string& line : linesOf(end.output)) {
    if (!has(line, "xception") && !has(line, kernel) && !has(line, ".cu:")) continue;
    std::smatch m;
    // The faulting line is where "the exception was triggered" (the warp has moved on since: the
    // frame shows where it waits); else the first a line names, with its folder where one gives it.
    const bool triggered = has(line, "triggered at");
    if (std::regex_search(line, m, where)) {
      const std::string named = m[1];
      if (triggered || (!atFault && lineNumber.empty())) lineNumber = m[2];
      if (file.empty() || (!has(file, "/") && has(named, "/"))) file = named;
      atFault = atFault || triggered;
    }
    const std::string said = "CUDA Exception: ";
    if (exception.empty() && has(line, said)) exception = line.substr(line.find(said) + said.size());
    const std::string shown = std::regex_replace(replaced(line, folder, "<scratch>"), folders, "$1");
    std::printf("[%s] %s\n", tag.c_str(), shown.c_str());
  }
  std::string source;  // the text of that line, where cuda-gdb's file is on this machine
  std::ifstream in(file);
  for (int n = 1; !file.empty() && std::getline(in, source); ++n)
    if (std::to_string(n) == lineNumber) break;
  if (!in) source.clear();
  const std::string base = file.substr(file.find_last_of('/') + 1);
  const std::string at = file.empty() ? "none" : base + ":" + lineNumber;
  std::printf("[%s] named: exception \"%s\", kernel %s %s, line %s\n", tag.c_str(), exception.c_str(),
              kernel.c_str(), has(end.output, kernel) ? "yes" : "no", at.c_str());
  if (!source.empty())
    std::printf("[%s] that line is the faulting store: %s\n", tag.c_str(),
                has(source, "the faulting store") ? "yes" : "no");
  std::printf("[%s] cuda-gdb: %s, %.0f ms\n", tag.c_str(), howItEnded(end).c_str(), clock.ms());
}

//! [dumps-child]
// In a child: both dumps, one after the other, into a scratch folder removed at the end; then
// cuda-gdb on each (the first while the second child runs: it needs no GPU).
int childCoredumps() {
  // The driver's debugger library, which ships with the driver: named in the output, so that a
  // machine that writes no dump says what it has.
  void* debugger = dlopen("libcudadebugger.so.1", RTLD_LAZY | RTLD_LOCAL);
  std::printf("[probe] libcudadebugger.so.1: %s\n", debugger ? "opened" : dlerror());
  if (debugger) dlclose(debugger);
  wb::ScratchDir scratch;
  const std::string folder = scratch.path(), full = folder + "/env.nvcudmp";
  const wb::ProcessEnd fromEnv = wb::runProcess({wb::selfPath(), "--child", "dump-env"},
      {"CUDA_ENABLE_COREDUMP_ON_EXCEPTION=1", "CUDA_COREDUMP_FILE=" + full}, kChildSeconds);
  const long long envEnded = monotonicNs();
  //! [dumps-child]
  report("env", fromEnv, envEnded, folder, {"env.nvcudmp"});
  // cuda-gdb reads the first dump before the second child faults, not beside it: on driver 580 a
  // child that faulted while cuda-gdb read another dump wrote none (the manual: no dump is written
  // while another developer tool works with the application).
  const std::string gdb = findCudaGdb();
  if (!gdb.empty() && fileBytes(full) > 0) openWithCudaGdb("gdb-env", gdb, full, folder, "write_to_and_stay");
#if CUDA_VERSION >= 12010
  const wb::ProcessEnd fromApi =
      wb::runProcess({wb::selfPath(), "--child", "dump-api", folder}, {}, kChildSeconds);
  const long long apiEnded = monotonicNs();
  std::fflush(stdout);
  report("api", fromApi, apiEnded, folder, {"context.nvcudmp", "global.nvcudmp"});
  if (!gdb.empty() && fileBytes(folder + "/context.nvcudmp") > 0)
    openWithCudaGdb("gdb-api", gdb, folder + "/context.nvcudmp", folder, "write_to_and_stay");
#else
  std::printf("[api] left out: this build's CUDA header (%d) predates the coredump attributes (CUDA 12.1)\n",
              CUDA_VERSION);
#endif
  if (gdb.empty()) std::printf("[gdb] skipped: no cuda-gdb (it ships with the toolkit, in bin/)\n");
  return wb::kExitOk;
}

// What every child runs without: each CUDA variable of common/environment.cpp's table but the two
// that choose the device. Each child sets what its step shows, and nothing else changes it.
std::vector<std::string> controlledVariables() { return wb::variablesButDeviceChoice(); }

std::vector<wb::EnvUse> environmentUses() {
  std::vector<wb::EnvUse> uses = {
      {"CUDA_ENABLE_COREDUMP_ON_EXCEPTION", wb::Under::Controls,
       "its children run without it; step 1 sets it for one"},
  };
  for (const std::string& name : controlledVariables()) {
    bool listed = false;
    for (const wb::EnvUse& u : uses) listed = listed || name == u.variable;
    // An EnvUse keeps a pointer to its name: the table's own string, which outlives this loop.
    if (!listed)
      uses.emplace_back(wb::findEnvVariable(name)->name, wb::Under::Controls, "its children run without it");
  }
  return uses;
}

// This program again as a child, with a time limit, started now in a thread and read by its step.
std::future<wb::ProcessEnd> startChild(const std::string& what) {
  return std::async(std::launch::async, [what] {
    return wb::runProcess({wb::selfPath(), "--child", what}, controlledVariables(), kChildSeconds);
  });
}


// The lines of the dumps child under tag, without it.
std::vector<std::string> tagged(const std::string& output, const std::string& tag) {
  std::vector<std::string> out;
  const std::string prefix = "[" + tag + "] ";
  for (const std::string& line : linesOf(output))
    if (line.rfind(prefix, 0) == 0) out.push_back(line.substr(prefix.size()));
  return out;
}

bool anyLine(const std::vector<std::string>& lines, const std::string& part) {
  for (const std::string& l : lines)
    if (has(l, part)) return true;
  return false;
}

void show(const std::vector<std::string>& lines) {
  for (const std::string& l : lines) std::printf("%s\n", l.c_str());
}

// Whether either child wrote a dump. Where neither did although libcudadebugger.so.1 opened, the
// run contradicts the page: the faulting warp stays resident, so the fault is recognized and
// reported (the CUDA-GDB manual's condition for a dump). Where the library is missing, steps 1 to 3
// show what happened and hold the run only to what needs no dump.
bool anyDump(const wb::ProcessEnd& dumps) {
  return !anyLine(tagged(dumps.output, "env"), "dump env.nvcudmp: none") ||
         !anyLine(tagged(dumps.output, "api"), "dump context.nvcudmp: none");
}

void envDumpStep(const wb::ProcessEnd& dumps) {
  const std::vector<std::string> env = tagged(dumps.output, "env");
  std::printf("a child with CUDA_ENABLE_COREDUMP_ON_EXCEPTION=1 CUDA_COREDUMP_FILE=<scratch>/env.nvcudmp:\n");
  show(env);
  const std::vector<std::string> probe = tagged(dumps.output, "probe");
  show(probe);
  // A fault that vanished is the risk of turning dumps on with a warp that exits at once (the manual);
  // this one stays resident, so its fault must be reported, dump or no dump.
  wb::expect(!anyLine(env, "cuCtxSynchronize: CUDA_SUCCESS"), "the fault reported (an abort, or an error)",
             "cuCtxSynchronize returned CUDA_SUCCESS after the faulting store");
  if (!anyDump(dumps)) {
    wb::expect(!anyLine(probe, "libcudadebugger.so.1: opened"), "a dump, where libcudadebugger.so.1 opened",
               "no dump from either child");
    std::printf("no GPU core dump was written on this machine, by this child or the next (no "
                "libcudadebugger.so.1): steps 1 to 3 show what happened and check only what needs no dump\n");
    return;
  }
  const bool aborted = anyLine(env, "ended: killed by signal " + std::to_string(SIGABRT));
  wb::expect(aborted && !anyLine(env, "dump env.nvcudmp: none"), "a dump written, then the process aborted",
             dumps.code == 0 ? "another end" : "the dumps child: " + howItEnded(dumps));
}

void apiDumpStep(const wb::ProcessEnd& dumps) {
  const std::vector<std::string> api = tagged(dumps.output, "api");
  std::printf("a child that sets up its dumps itself (global flags %s, a per-context file):\n",
              CUDA_VERSION >= 12050 ? "LIGHTWEIGHT_FLAGS | SKIP_ABORT" : "LIGHTWEIGHT, no TRIGGER_HOST");
  show(api);
  if (CUDA_VERSION < 12010) return;
  const bool perContext = anyLine(api, "per context, ENABLE_ON_EXCEPTION: 1") &&
                          anyLine(api, "globally, ENABLE_ON_EXCEPTION: 0");
  const bool ownFile = !anyLine(api, "dump context.nvcudmp: none") && anyLine(api, "dump global.nvcudmp: none");
  const bool wentOn = anyLine(api, "cuCtxSynchronize: CUDA_ERROR_ILLEGAL_ADDRESS") &&
                      anyLine(api, "ended: exit code 0");
  wb::expect(perContext && (ownFile || !anyDump(dumps)), "the dump enabled and named per context, not globally",
             "other settings or files");
  wb::expect(wentOn, "the process going on after the dump, with the error in hand", "another end");
  wb::expect(!anyLine(api, "ENABLE_USER_TRIGGER): CUDA_SUCCESS"), "a user trigger refused per context",
             "it was set");
}

void gdbStep(const wb::ProcessEnd& dumps) {
  for (const char* tag : {"gdb-env", "gdb-api"}) {
    const std::vector<std::string> lines = tagged(dumps.output, tag);
    if (lines.empty()) continue;
    const bool full = std::strcmp(tag, "gdb-env") == 0;
    std::printf("cuda-gdb -batch -ex \"target cudacore <scratch>/%s\":\n", full ? "env.nvcudmp" : "context.nvcudmp");
    show(lines);
  }
  const std::vector<std::string> skipped = tagged(dumps.output, "gdb");
  show(skipped);
  if (!skipped.empty()) return;
  if (!anyDump(dumps)) return (void)std::printf("no dump to open\n");
  const std::vector<std::string> env = tagged(dumps.output, "gdb-env");
  const bool named =
      anyLine(env, "Illegal Address") && anyLine(env, "kernel write_to_and_stay yes") && !anyLine(env, "line none");
  wb::expect(named, "cuda-gdb naming the exception, the kernel and its line",
             env.empty() ? "no cuda-gdb output" : env.back());
}

int childMain(const std::vector<std::string>& args) {
  const std::string what = args.empty() ? "" : args[0];
  if (what == "coredumps") return childCoredumps();
  if (what == "dump-env") return childDumpFromEnvironment();
#if CUDA_VERSION >= 12010
  if (what == "dump-api" && args.size() == 2) return childDumpFromApi(args[1]);
#endif
  std::fprintf(stderr, "usage: lesson25-core-dumps [--child coredumps|dump-env|dump-api <folder>]\n");
  return wb::kExitUsage;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  try {
    if (!args.empty() && args[0] == "--child") return childMain({args.begin() + 1, args.end()});
    if (!args.empty()) return childMain(args);
    wb::checkEnvironment(environmentUses());
    CU_CHECK(cuInit(0));  // a machine without a driver hears why before any child starts
    wb::verifiedImagePath("faults.fatbin");  // and a damaged image stops it here, not in every child
    // The children fault the GPU and write the dumps, then cuda-gdb opens them: one child runs it all.
    const wb::ProcessEnd dumped = startChild("coredumps").get();
    wb::step(1, "A GPU core dump from the environment");
    envDumpStep(dumped);
    wb::step(2, "Core dumps set up by the program: lightweight, per context, no abort");
    apiDumpStep(dumped);
    wb::step(3, "Opening a core dump with cuda-gdb");
    gdbStep(dumped);
    return wb::kExitOk;
  } catch (...) {
    return wb::reportFatal(std::current_exception());
  }
}
