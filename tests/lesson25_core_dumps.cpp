// Lesson 25's claims. The documented defaults are read in this process. The core dumps are the
// lesson program's children (--child coredumps, which starts the faulting children and cuda-gdb),
// read from the records lesson25.run left (common/process.hpp), or started here when there are none.
// This process never faults.
#include "damaged_images.hpp"
#include "environment.hpp"
#include "process.hpp"
#include "support.hpp"

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

constexpr unsigned kLimitSeconds = 120;

std::vector<std::string> linesOf(const std::string& text) {
  std::vector<std::string> lines;
  std::stringstream ss(text);
  for (std::string line; std::getline(ss, line);) lines.push_back(line);
  return lines;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The lesson program as a child: recorded by lesson25.run under ctest, else run now, with every
// CUDA variable but the two that choose the device removed, as the program runs its children.
const wb::ProcessEnd& child(const std::string& what) {
  static std::mutex mutex;
  static std::map<std::string, wb::ProcessEnd> runs;
  const std::lock_guard<std::mutex> lock(mutex);
  if (!runs.count(what)) {
    const std::vector<std::string> argv{WORKBOOK_LESSON_PROGRAM, "--child", what};
    const std::vector<std::string> removed = wb::variablesButDeviceChoice();
    const std::optional<wb::ProcessEnd> recorded = wb::recordedRun(argv, removed);
    runs[what] = recorded ? *recorded : wb::runProcess(argv, removed, kLimitSeconds);
  }
  return runs.at(what);
}

// The lines of the core-dump child under [tag], without it.
std::vector<std::string> tagged(const std::string& tag) {
  std::vector<std::string> out;
  const std::string prefix = "[" + tag + "] ";
  for (const std::string& line : linesOf(child("coredumps").output))
    if (line.rfind(prefix, 0) == 0) out.push_back(line.substr(prefix.size()));
  return out;
}

bool anyLine(const std::vector<std::string>& lines, const std::string& part) {
  for (const std::string& l : lines)
    if (has(l, part)) return true;
  return false;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& l : lines) out += l + "\n";
  return out;
}

// Empty where either core-dump child wrote a dump; else why the cases that need one are skipped:
// this machine has no libcudadebugger.so.1, which writes them. Where it opened and neither child
// wrote a dump, the faulting warp having stayed resident (kernels/faults.cu), that is a failure.
std::string noDump() {
  if (!anyLine(tagged("env"), "dump env.nvcudmp: none") || !anyLine(tagged("api"), "dump context.nvcudmp: none"))
    return "";
  const std::vector<std::string> probe = tagged("probe");
  INFO(joined(probe));
  REQUIRE_MESSAGE(!anyLine(probe, "libcudadebugger.so.1: opened"),
                  "libcudadebugger.so.1 opened, the faulting warp stayed resident, and neither child wrote a dump");
  return "no GPU core dump was written on this machine by either child (" +
         (probe.empty() ? std::string("libcudadebugger.so.1 not probed") : probe.front()) + ")";
}

// The value after "<what>: " in one of lines, or "".
std::string valueOf(const std::vector<std::string>& lines, const std::string& what) {
  for (const std::string& l : lines)
    if (l.rfind(what + ": ", 0) == 0) return l.substr(what.size() + 2);
  return "";
}

}  // namespace

TEST_SUITE("defaults") {
  // cuda.h (cuCoredumpGetAttributeGlobal): CU_COREDUMP_ENABLE_ON_EXCEPTION "The default value is
  // ::false", and CU_COREDUMP_ENABLE_USER_TRIGGER's "default value is ::false". Read in this process,
  // which sets neither: a program that wants dumps must ask for them.
  TEST_CASE("in a process that set nothing, the global settings have dumps on exception and the user trigger off") {
    if (CUDA_VERSION < 12010) return wbt::skipCase("this build's CUDA header predates the coredump attributes (12.1)");
#if CUDA_VERSION >= 12010
    for (const wb::EnvVariable& v : wb::cudaEnvironmentVariables())
      if (std::strstr(v.name, "COREDUMP") && std::getenv(v.name))
        return wbt::skipCase(std::string(v.name) + " is set, and its value takes precedence (cuda.h)");
    wbt::initDriver();
    for (const CUcoredumpSettings which : {CU_COREDUMP_ENABLE_ON_EXCEPTION, CU_COREDUMP_ENABLE_USER_TRIGGER}) {
      CAPTURE(static_cast<int>(which));
      size_t size = 0;  // asked with value NULL: the size the driver expects
      REQUIRE(cuCoredumpGetAttributeGlobal(which, nullptr, &size) == CUDA_SUCCESS);
      REQUIRE(size > 0);
      std::vector<unsigned char> value(size, 0xFF);
      REQUIRE(cuCoredumpGetAttributeGlobal(which, value.data(), &size) == CUDA_SUCCESS);
      CHECK(std::all_of(value.begin(), value.end(), [](unsigned char b) { return b == 0; }));
    }
#endif
  }
}

TEST_SUITE("coredump-env") {
  // The CUDA-GDB manual: CUDA_ENABLE_COREDUMP_ON_EXCEPTION=1 generates "a GPU core dump when a GPU
  // exception is encountered"; cuda.h: GPU exceptions raise an abort() in the host process unless
  // CU_COREDUMP_SKIP_ABORT is set.
  TEST_CASE("with CUDA_ENABLE_COREDUMP_ON_EXCEPTION=1 a fault writes a GPU core dump to CUDA_COREDUMP_FILE and the process is aborted") {
    if (const std::string why = noDump(); !why.empty()) return wbt::skipCase(why);
    const std::vector<std::string> env = tagged("env");
    INFO(child("coredumps").output);
    CHECK(valueOf(env, "ended") == "killed by signal " + std::to_string(SIGABRT) + " (SIGABRT)");
    const std::string dump = valueOf(env, "dump env.nvcudmp");
    CHECK(dump != "none");
    CHECK(dump != "0 bytes");
  }

  // The CUDA-GDB manual: a warp that exits before its exception is recognized "may result in the
  // exception not being reported"; the faulting kernel stays resident, so this fault must be: the
  // child aborts or its cuCtxSynchronize returns the error, with a dump or without. Whether the
  // abort comes before cuCtxSynchronize returns cuda.h does not say: printed.
  TEST_CASE("with dumps on, a fault whose warp stays resident is reported: the child never ends with cuCtxSynchronize CUDA_SUCCESS") {
    const std::vector<std::string> env = tagged("env");
    INFO(joined(env));
    CHECK(anyLine(env, "cuLaunchKernel(write_to_and_stay, 0x10): CUDA_SUCCESS"));
    CHECK_FALSE(anyLine(env, "cuCtxSynchronize: CUDA_SUCCESS"));
    MESSAGE("cuCtxSynchronize " << (anyLine(env, "cuCtxSynchronize:") ? "returned" : "did not return")
            << " before the process ended (observed)");
  }
}

TEST_SUITE("coredump-api") {
  // cuda.h: cuCoredumpSetAttribute sets "a coredump attribute value for the current context";
  // cuCoredumpGetAttributeGlobal's ENABLE_ON_EXCEPTION "The default value is false".
  TEST_CASE("dumps enabled with cuCoredumpSetAttribute are the current context's: the global setting stays off") {
    if (CUDA_VERSION < 12010) return wbt::skipCase("this build's CUDA header predates the coredump attributes (12.1)");
    const std::vector<std::string> api = tagged("api");
    INFO(joined(api));
    CHECK(valueOf(api, "  per context, ENABLE_ON_EXCEPTION") == "1");
    CHECK(valueOf(api, "  globally, ENABLE_ON_EXCEPTION") == "0");
  }

  // cuda.h (CU_CTX_COREDUMP_ENABLE): "The initial settings will be taken from the global settings at
  // the time of context creation."
  TEST_CASE("a context created after the global generation flags were set has the same flags") {
    if (CUDA_VERSION < 12050) return wbt::skipCase("this build's CUDA header predates CU_COREDUMP_GENERATION_FLAGS (12.5)");
    const std::vector<std::string> api = tagged("api");
    INFO(joined(api));
    const std::string global = valueOf(api, "  globally, GENERATION_FLAGS");
    CHECK_FALSE(global.empty());
    CHECK(valueOf(api, "  per context, GENERATION_FLAGS") == global);
  }

  TEST_CASE("the context's own CU_COREDUMP_FILE names its dump, and the global file is not written") {
    if (CUDA_VERSION < 12010) return wbt::skipCase("this build's CUDA header predates the coredump attributes (12.1)");
    if (const std::string why = noDump(); !why.empty()) return wbt::skipCase(why);
    const std::vector<std::string> api = tagged("api");
    INFO(joined(api));
    const std::string own = valueOf(api, "dump context.nvcudmp");
    CHECK(own != "none");
    CHECK(own != "0 bytes");
    CHECK(valueOf(api, "dump global.nvcudmp") == "none");
  }

  // cuda.h: "CU_COREDUMP_ENABLE_USER_TRIGGER and CU_COREDUMP_PIPE cannot be set on a per-context basis."
  TEST_CASE("CU_COREDUMP_ENABLE_USER_TRIGGER cannot be set per context") {
    if (CUDA_VERSION < 12010) return wbt::skipCase("this build's CUDA header predates the coredump attributes (12.1)");
    const std::vector<std::string> api = tagged("api");
    const std::string rc = valueOf(api, "  cuCoredumpSetAttribute(CU_COREDUMP_ENABLE_USER_TRIGGER)");
    INFO(joined(api));
    CHECK_FALSE(rc.empty());
    CHECK(rc.rfind("CUDA_SUCCESS", 0) != 0);
  }

  // cuda.h: CU_COREDUMP_SKIP_ABORT: "If set, GPU exceptions will not raise an abort() in the host
  // CPU process"; the fault is then reported as lesson 10 shows.
  TEST_CASE("with CU_COREDUMP_SKIP_ABORT the process goes on: its synchronisation returns CUDA_ERROR_ILLEGAL_ADDRESS and it exits normally") {
    if (CUDA_VERSION < 12010) return wbt::skipCase("this build's CUDA header predates the coredump attributes (12.1)");
    const std::vector<std::string> api = tagged("api");
    INFO(joined(api));
    const std::string sync = valueOf(api, "  cuCtxSynchronize");
    CHECK(sync.rfind(wb::errorName(CUDA_ERROR_ILLEGAL_ADDRESS), 0) == 0);
    CHECK(sync == wb::errorName(CUDA_ERROR_ILLEGAL_ADDRESS) + " (" + std::to_string(CUDA_ERROR_ILLEGAL_ADDRESS) + ")");
    CHECK(valueOf(api, "ended") == "exit code 0");
  }
}

TEST_SUITE("cuda-gdb") {
  // The CUDA-GDB manual: `target cudacore` "will open the core dump file and print the exception
  // encountered during program execution"; the kernels are built with -lineinfo.
  TEST_CASE("cuda-gdb opens the dump and names the exception, the kernel and the source line of its write") {
    if (const std::vector<std::string> skipped = tagged("gdb"); !skipped.empty())
      return wbt::skipCase(valueOf(skipped, "skipped"));
    if (const std::string why = noDump(); !why.empty()) return wbt::skipCase(why);
    const std::vector<std::string> gdb = tagged("gdb-env");
    INFO(child("coredumps").output);
    REQUIRE_FALSE(gdb.empty());
    CHECK(anyLine(gdb, "Illegal Address"));
    const std::string named = valueOf(gdb, "named");
    CHECK(has(named, "kernel write_to_and_stay yes"));
    CHECK(std::regex_search(named, std::regex(R"(line faults\.cu:\d+$)")));
    const std::string holds = valueOf(gdb, "that line is the faulting store");
    if (!holds.empty()) CHECK(holds == "yes");
    const std::vector<std::string> lightweight = tagged("gdb-api");
    MESSAGE("from the lightweight dump: " << valueOf(lightweight, "named"));
  }
}

TEST_SUITE("damaged-images") {
  TEST_CASE("pointed at an empty folder or at damaged images, the program stops in seconds, naming the file") {
    wbt::checkProgramRefusesDamagedImages(WORKBOOK_LESSON_PROGRAM);
  }
}
