// Lesson 10: kernel faults, and living with them.
//
// What you learn: a kernel that writes to an invalid address does not fail at its launch. The
// launch returns CUDA_SUCCESS; some later call, even an unrelated copy, returns
// CUDA_ERROR_ILLEGAL_ADDRESS, so the checked call's file:line names a line that did nothing wrong.
// From then on the process is poisoned: every call fails, a new context on the device fails, and a
// primary-context reset does not bring it back; the reference says the process must be terminated
// and relaunched. __trap() and a misaligned access are documented the same way; a failed
// device-side assert is documented per context, and the children try the recoveries other NVIDIA
// text suggests (a reset after the trap, a new context after the assert) and print what happened.
// A launch with too many threads or an allocation too large for the device are errors after which
// everything still works. To find the faulting launch: wb::launch's debug mode, CUDA_LAUNCH_BLOCKING=1,
// compute-sanitizer, and GPU core dumps. And the deployer's answer: a supervisor that runs GPU
// work in a child process, sees it die, and starts a fresh one that finishes the job.
//
// Every fault happens in a child process: this program starts itself again with --child <what>,
// with a time limit, and narrates what the child saw. The parent never faults.
//
// APIs: cuLaunchKernel, cuCtxSynchronize, cuMemcpyDtoH, cuMemAlloc, cuCtxGetCurrent, cuCtxCreate,
//       cuDevicePrimaryCtxReset, cuDevicePrimaryCtxRetain, cuLibraryLoadFromFile, cuLibraryGetKernel
// Run:  ctest -R lesson10   (or build/lessons/lesson10-kernel-faults)
#include "launch.hpp"
#include "process.hpp"
#include "workbook.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <future>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

namespace {

constexpr unsigned kChildSeconds = 60;  // no child may take longer: a hang ends in a message
constexpr unsigned kChunks = 8, kPerChunk = 65536;

// One line per call: "  <what>: <NAME> (<code>)". The tests read these lines back.
CUresult say(const char* what, CUresult rc) {
  std::printf("  %s: %s (%d)\n", what, wb::errorName(rc).c_str(), static_cast<int>(rc));
  std::fflush(stdout);
  return rc;
}

// The device's primary context, current, and a kernel of faults.fatbin by name.
struct Setup {
  CUdevice dev = 0;
  CUcontext primary = nullptr;
  CUlibrary library = nullptr;
  Setup() {
    CU_CHECK(cuInit(0));
    CU_CHECK(cuDeviceGet(&dev, 0));
    CU_CHECK(cuDevicePrimaryCtxRetain(&primary, dev));
    CU_CHECK(cuCtxSetCurrent(primary));
    CU_CHECK(cuLibraryLoadFromFile(&library, wb::verifiedImagePath("faults.fatbin").c_str(), nullptr, nullptr, 0,
                                   nullptr, nullptr, 0));
  }
  CUfunction kernel(const char* name) const {
    CUkernel k = nullptr;
    CU_CHECK(cuLibraryGetKernel(&k, library, name));
    return reinterpret_cast<CUfunction>(k);
  }
  // A child that faulted ends here without cleaning up: every call would fail, and the process
  // exit takes the context with it. That is the point of running it in a child.
};

}  // namespace

//! [illegal-address]
// In a child: the fault, then one call after another, each printed with what it returned.
int childIllegalAddress() {
  Setup s;
  CUdeviceptr unrelated = 0;
  CU_CHECK(cuMemAlloc(&unrelated, sizeof(int)));
  unsigned long long address = 0x10;
  void* args[] = {&address};
  say("cuLaunchKernel(write_to, 0x10)",
      cuLaunchKernel(s.kernel("write_to"), 1, 1, 1, 1, 1, 1, 0, nullptr, args, nullptr));
  int value = 0;
  say("cuMemcpyDtoH of an unrelated buffer", cuMemcpyDtoH(&value, unrelated, sizeof value));
  CUdeviceptr more = 0;
  say("cuMemAlloc", cuMemAlloc(&more, 4096));
  say("cuCtxSynchronize", cuCtxSynchronize());
  CUcontext current = nullptr;
  say("cuCtxGetCurrent", cuCtxGetCurrent(&current));
  CUcontext fresh = nullptr;
  say("cuCtxCreate of a new context on the device", wb::createContext(&fresh, 0, s.dev));
  say("cuDevicePrimaryCtxReset", cuDevicePrimaryCtxReset(s.dev));
  CUcontext again = nullptr;
  say("cuDevicePrimaryCtxRetain after the reset", cuDevicePrimaryCtxRetain(&again, s.dev));
  say("cuMemAlloc after the reset", cuMemAlloc(&more, 4096));
  return wb::kExitOk;
}
//! [illegal-address]

//! [checked]
// In a child: the same fault under the course's checks. The launch goes through wb::launch, the
// copy through CU_CHECK; whichever reports the fault throws, and main() prints its message.
int childChecked() {
  Setup s;
  CUdeviceptr unrelated = 0;
  CU_CHECK(cuMemAlloc(&unrelated, sizeof(int)));
  unsigned long long address = 0x10;
  void* args[] = {&address};
  wb::launch(s.kernel("write_to"), "write_to", 1, 1, args);
  int value = 0;
  CU_CHECK(cuMemcpyDtoH(&value, unrelated, sizeof value));
  return wb::kExitOk;
}
//! [checked]

//! [other-faults]
// In a child: one of the other faults, then whether the context still works, then (below) the
// recovery that some NVIDIA text suggests for that fault.
void tryRecovery(const Setup& s, const std::string& which);

int childOtherFault(const std::string& which) {
  Setup s;
  CUdeviceptr buffer = 0;
  CU_CHECK(cuMemAlloc(&buffer, 64));
  int positive = 0;
  CUdeviceptr misaligned = buffer, out = buffer + 32;
  void* assertArgs[] = {&positive};
  void* misalignedArgs[] = {&misaligned, &out};
  const auto launchOne = [&](const char* name, void** args) {
    say((std::string("cuLaunchKernel(") + name + ")").c_str(),
        cuLaunchKernel(s.kernel(name), 1, 1, 1, 1, 1, 1, 0, nullptr, args, nullptr));
  };
  if (which == "trap") launchOne("trap_now", nullptr);
  if (which == "assert") launchOne("assert_positive", assertArgs);
  if (which == "misaligned") launchOne("read_misaligned", misalignedArgs);
  say("cuCtxSynchronize", cuCtxSynchronize());
  CUdeviceptr more = 0;
  say("cuMemAlloc afterwards", cuMemAlloc(&more, 4096));
  tryRecovery(s, which);
  return wb::kExitOk;
}
//! [other-faults]

//! [other-faults-recovery]
// The runtime's documentation recommends not resetting the primary context "except just before exit
// or to recover from an unspecified launch failure" (719, what the trap gives here), while
// cuda.h says of 719 that the process must be terminated and relaunched: the trap child tries the
// reset. CUDA_ERROR_ASSERT says "the context cannot be used anymore, and must be destroyed": the
// assert child tries a new context. Printed, never assumed: the page follows the error codes' text.
void tryRecovery(const Setup& s, const std::string& which) {
  CUdeviceptr more = 0;
  if (which == "trap") {
    say("cuDevicePrimaryCtxReset", cuDevicePrimaryCtxReset(s.dev));
    CUcontext again = nullptr;
    if (say("cuDevicePrimaryCtxRetain after the reset", cuDevicePrimaryCtxRetain(&again, s.dev)) ==
        CUDA_SUCCESS)
      cuCtxSetCurrent(again);
    say("cuMemAlloc after the reset", cuMemAlloc(&more, 4096));
  }
  if (which == "assert") {
    CUcontext fresh = nullptr;
    if (say("cuCtxCreate of a new context on the device", wb::createContext(&fresh, 0, s.dev)) ==
        CUDA_SUCCESS)
      say("cuMemAlloc in the new context", cuMemAlloc(&more, 4096));
  }
}
//! [other-faults-recovery]

//! [job-worker]
// In a child: chunks [first, kChunks) of the job, one line per finished chunk, flushed at once so
// the supervisor sees the progress even if this process dies. poison names a chunk that faults.
int childJob(unsigned first, int poison) {
  Setup s;
  const CUfunction chunk = s.kernel("job_chunk");
  CUdeviceptr sum = 0;
  CU_CHECK(cuMemAlloc(&sum, sizeof(unsigned long long)));
  for (unsigned c = first; c < kChunks; ++c) {
    CU_CHECK(cuMemsetD32(sum, 0, 2));
    unsigned start = c * kPerChunk, n = kPerChunk;
    int poisoned = static_cast<int>(c) == poison;
    void* args[] = {&sum, &start, &n, &poisoned};
    wb::launch(chunk, "job_chunk", 64, 256, args);
    unsigned long long result = 0;
    CU_CHECK(cuMemcpyDtoH(&result, sum, sizeof result));  // waits for the chunk: a fault shows here
    std::printf("chunk %u %llu\n", c, result);
    std::fflush(stdout);
  }
  CU_CHECK(cuMemFree(sum));
  return wb::kExitOk;
}
//! [job-worker]

// What every child runs without: each CUDA variable of common/environment.cpp's table but the two
// that choose the device, whatever the user's shell sets, so that a child faults the GPU the user
// chose. Each step then shows the documented default its page explains (step 4 sets
// CUDA_LAUNCH_BLOCKING=1 itself, for one child), and a fault meets no setting the course has not
// tried with faults (the page's pitfalls say why that matters).
std::vector<std::string> controlledVariables() { return wb::variablesButDeviceChoice(); }

// What the program says at the top for each of them that is set: three with their own reason.
std::vector<wb::EnvUse> environmentUses() {
  std::vector<wb::EnvUse> uses = {
      {"CUDA_LAUNCH_BLOCKING", wb::Under::Controls, "its children run without it; step 4 sets it for one child"},
      {"CUDA_DEVICE_WAITS_ON_EXCEPTION", wb::Under::Controls, "its children run without it, so a fault ends them"},
      {"CUDA_ENABLE_COREDUMP_ON_EXCEPTION", wb::Under::Controls, "its children run without it: no core files, no abort"},
  };
  for (const std::string& name : controlledVariables()) {
    bool listed = false;
    for (const wb::EnvUse& u : uses) listed = listed || name == u.variable;
    // An EnvUse keeps a pointer to its name: the table's own string, which outlives this loop.
    if (!listed) uses.emplace_back(wb::findEnvVariable(name)->name, wb::Under::Controls, "its children run without it");
  }
  return uses;
}

// Runs this program again as a child, with a time limit, and returns what it printed and how it ended.
wb::ProcessEnd child(const std::vector<std::string>& args, const std::vector<std::string>& set = {}) {
  std::vector<std::string> argv{wb::selfPath(), "--child"};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<std::string> env = controlledVariables();  // bare names: removed
  env.insert(env.end(), set.begin(), set.end());
  return wb::runProcess(argv, env, kChildSeconds);
}

// A child started now, in a thread, and read when its step is narrated: the children of steps 1, 2
// and 4 are independent processes, so they run side by side (each pays for its own cuInit).
std::future<wb::ProcessEnd> startChild(std::vector<std::string> args, std::vector<std::string> set = {}) {
  return std::async(std::launch::async, [args, set] { return child(args, set); });
}

std::string howItEnded(const wb::ProcessEnd& end) {
  if (end.timedOut) return "it hung and was ended after " + std::to_string(kChildSeconds) + " s";
  if (end.signal) return "it was killed by signal " + std::to_string(end.signal);
  return "it exited with code " + std::to_string(end.code);
}

void show(const wb::ProcessEnd& end) {
  std::printf("%s", end.output.c_str());
  std::printf("  (the child: %s)\n", howItEnded(end).c_str());
  wb::expect(!end.timedOut && end.signal == 0 && end.code == 0, "the faulting child end by itself, exit code 0",
             howItEnded(end));
}

// The line of a child's output that holds text, or "".
std::string lineWith(const std::string& output, const std::string& text) {
  std::stringstream ss(output);
  for (std::string line; std::getline(ss, line);)
    if (line.find(text) != std::string::npos) return line;
  return "";
}

// The error a child's call printed in its line "  <what>: <NAME> (<code>)", or "".
std::string errorOf(const std::string& output, const std::string& what) {
  const std::string line = lineWith(output, "  " + what + ": ");
  return line.empty() ? "" : line.substr(line.find(": ", 2) + 2);
}

// The page's claim about a call of a child: that it returned success, or that it did not.
void expectCall(const std::string& output, const std::string& what, bool succeeds) {
  const std::string got = errorOf(output, what);
  const bool success = got.rfind("CUDA_SUCCESS", 0) == 0;
  wb::expect(!got.empty() && success == succeeds, what + (succeeds ? " returning CUDA_SUCCESS" : " failing"),
             got.empty() ? "the child did not get that far" : "it returned " + got);
}

//! [not-sticky]
// In this process: errors that leave the context working. Each is followed by real work.
void notSticky() {
  std::fflush(stdout);
  Setup s;
  const CUfunction faultless = s.kernel("job_chunk");
  CUdeviceptr sum = 0;
  CU_CHECK(cuMemAlloc(&sum, sizeof(unsigned long long)));
  CU_CHECK(cuMemsetD32(sum, 0, 2));
  unsigned first = 0, n = 4;
  int poison = 0;
  void* args[] = {&sum, &first, &n, &poison};
  const CUresult tooMany = say("cuLaunchKernel with 2048 threads per block",
                                cuLaunchKernel(faultless, 1, 1, 1, 2048, 1, 1, 0, nullptr, args, nullptr));
  wb::expect(tooMany != CUDA_SUCCESS, "a launch of 2048 threads per block refused", "it was accepted");
  size_t freeBytes = 0, total = 0;
  CU_CHECK(cuMemGetInfo(&freeBytes, &total));
  CUdeviceptr huge = 0;
  const CUresult tooLarge = say("cuMemAlloc of twice the device's memory", cuMemAlloc(&huge, total * 2));
  wb::expect(tooLarge != CUDA_SUCCESS, "an allocation of twice the device's memory refused", "it succeeded");
  //! [not-sticky]

  //! [not-sticky-after]
  const CUresult launched = say("cuLaunchKernel with 256 threads per block",
                                cuLaunchKernel(faultless, 1, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr));
  unsigned long long result = 0;
  const CUresult copied = say("cuMemcpyDtoH of its result", cuMemcpyDtoH(&result, sum, sizeof result));
  wb::expect(launched == CUDA_SUCCESS && copied == CUDA_SUCCESS && result == 14,
             "the context working after both errors (a launch and a copy that succeed, the sum 14)",
             "launch " + wb::errorName(launched) + ", copy " + wb::errorName(copied) + ", sum " +
                 std::to_string(result));
  std::printf("  the result: %llu (0 + 1 + 4 + 9 = 14): the context still works\n", result);
  CU_CHECK(cuMemFree(sum));
  CU_CHECK(cuLibraryUnload(s.library));
  CU_CHECK(cuCtxSetCurrent(nullptr));
  CU_CHECK(cuDevicePrimaryCtxRelease(s.dev));
  //! [not-sticky-after]
}

// compute-sanitizer: beside this program's toolkit, in CUDA_HOME, or on PATH; "" when absent.
std::string findSanitizer() {
  std::vector<std::string> candidates = {"/usr/local/cuda/bin/compute-sanitizer"};
  if (const char* home = std::getenv("CUDA_HOME"))
    candidates.insert(candidates.begin(), std::string(home) + "/bin/compute-sanitizer");
  if (const char* path = std::getenv("PATH")) {
    std::stringstream ss(path);
    for (std::string dir; std::getline(ss, dir, ':');) candidates.push_back(dir + "/compute-sanitizer");
  }
  for (const auto& c : candidates)
    if (access(c.c_str(), X_OK) == 0) return c;
  return "";
}

//! [find-the-launch]
// The same faulting child three ways: plain, with wb::launch's debug mode, and with
// CUDA_LAUNCH_BLOCKING=1. Then under compute-sanitizer, which names the kernel, the access and
// the address.
struct FindRuns {
  std::future<wb::ProcessEnd> plain = startChild({"checked"});
  std::future<wb::ProcessEnd> synced = startChild({"checked"}, {"WORKBOOK_SYNC_LAUNCHES=1"});
  std::future<wb::ProcessEnd> blocking = startChild({"checked"}, {"CUDA_LAUNCH_BLOCKING=1"});
  std::string sanitizer = findSanitizer();
  // Not under compute-sanitizer itself, and not in ctest's lesson10.run, which sets
  // WORKBOOK_SKIP_SANITIZER_RUN: the sanitizer's start-up takes seconds, and a learner runs
  // `ctest -R lesson10` again and again. The program on its own shows it.
  bool skipped = wb::underSanitizer() || std::getenv("WORKBOOK_SKIP_SANITIZER_RUN");
  bool sanitizerRuns = !sanitizer.empty() && !skipped;
  std::future<wb::ProcessEnd> sanitized = sanitizerRuns ? std::async(std::launch::async, [path = sanitizer] {
    std::vector<std::string> env = controlledVariables();
    return wb::runProcess({path, "--show-backtrace", "no", wb::selfPath(), "--child", "checked"}, env,
                          3 * kChildSeconds);
  }) : std::future<wb::ProcessEnd>();
};

//! [find-the-launch]

void sanitizerFindings(FindRuns& runs);

//! [find-the-launch-check]
void findTheLaunch(FindRuns& runs) {
  // Which call each way blames: the copy after the launch, or the launch itself. The course's debug
  // mode waits inside wb::launch, so it must blame the launch. CUDA_LAUNCH_BLOCKING=1 is documented
  // only as disabling asynchronous launches: which call reports the fault is what this driver did.
  const std::tuple<const char*, std::future<wb::ProcessEnd>*, const char*, bool> ways[] = {
      {"as it is", &runs.plain, "cuMemcpyDtoH(", true},
      {"with WORKBOOK_SYNC_LAUNCHES=1", &runs.synced, "cuLaunchKernel(write_to)", true},
      {"with CUDA_LAUNCH_BLOCKING=1", &runs.blocking, "cuLaunchKernel(write_to)", false},
  };
  for (const auto& [how, run, blamed, required] : ways) {
    const wb::ProcessEnd end = run->get();
    const std::string error = lineWith(end.output, "error:");
    const bool named = error.find(blamed) != std::string::npos;
    std::printf("  %s: %s\n", how, error.c_str());
    if (!required && !named)
      std::printf("    (not the launch this time: the reference does not say which call reports it)\n");
    wb::expect((named || !required) && error.find("ILLEGAL_ADDRESS") != std::string::npos,
               std::string(how) + ": the fault reported" +
                   (required ? std::string(" by ") + blamed + "...)" : ""),
               error.empty() ? howItEnded(end) : error);
  }
  if (!runs.sanitizerRuns) {
    std::printf("  compute-sanitizer: %s\n",
                runs.sanitizer.empty() ? "not found (it ships with the toolkit, in bin/)"
                : wb::underSanitizer()
                    ? "skipped: this program already runs under it"
                    : "left out of this run (WORKBOOK_SKIP_SANITIZER_RUN is set); "
                      "run the program itself to see it");
    return;
  }
  sanitizerFindings(runs);
}
//! [find-the-launch-check]

//! [find-the-launch-sanitizer]
void sanitizerFindings(FindRuns& runs) {
  const wb::ProcessEnd end = runs.sanitized.get();
  std::printf("  under compute-sanitizer, its first findings:\n");
  std::stringstream ss(end.output);
  int shown = 0;
  for (std::string line; std::getline(ss, line) && shown < 6;)
    if (line.rfind("========= ", 0) == 0 && line.size() > 10) {
      std::printf("  %s\n", line.c_str());
      ++shown;
    }
  wb::expect(end.output.find("Invalid __global__ write") != std::string::npos,
             "compute-sanitizer naming the invalid write",
             shown ? "it reported something else" : howItEnded(end));
}
//! [find-the-launch-sanitizer]

//! [supervisor]
// Runs the job in worker processes. A worker prints "chunk <c> <sum>" per finished chunk; when it
// dies or reports an error, the supervisor starts a fresh one at the first unfinished chunk. The
// first worker is given a poisoned chunk, standing in for a transient fault.
bool supervise() {
  unsigned next = 0;
  unsigned long long total = 0;
  int workers = 0;
  while (next < kChunks && workers < 4) {
    const int poison = workers == 0 ? 5 : -1;
    const wb::ProcessEnd end = child({"job", std::to_string(next), std::to_string(poison)});
    ++workers;
    const unsigned from = next;
    std::stringstream ss(end.output);
    for (std::string line; std::getline(ss, line);) {
      unsigned c = 0;
      unsigned long long sum = 0;
      if (std::sscanf(line.c_str(), "chunk %u %llu", &c, &sum) == 2 && c == next) {
        total += sum;
        ++next;
      }
    }
    const std::string done =
        next == from ? std::string("no chunk done")
                     : "chunks " + std::to_string(from) + " to " + std::to_string(next - 1) + " done";
    std::printf("  worker %d: %s, then %s\n", workers, done.c_str(), howItEnded(end).c_str());
    if (end.code != 0) std::printf("    it said: %s\n", lineWith(end.output, "error:").c_str());
  }
  //! [supervisor]

  //! [supervisor-check]
  const unsigned long long n = kChunks * kPerChunk;  // sum of k*k for k < n
  const unsigned long long expected = (n - 1) * n * (2 * n - 1) / 6;
  std::printf("  the job: %u of %u chunks, sum %llu (expected %llu), %d workers\n", next, kChunks, total,
              expected, workers);
  return next == kChunks && total == expected && workers == 2;
  //! [supervisor-check]
}

int childMain(const std::vector<std::string>& args) {
  const std::string& what = args.empty() ? std::string() : args[0];
  if (what == "illegal-address") return childIllegalAddress();
  if (what == "checked") return childChecked();
  if (what == "trap" || what == "assert" || what == "misaligned") return childOtherFault(what);
  if (what == "job" && args.size() == 3) return childJob(std::stoul(args[1]), std::stoi(args[2]));
  if (what == "supervise") return supervise() ? wb::kExitOk : wb::kExitDriverError;
  std::fprintf(stderr, "usage: lesson10-kernel-faults [--supervise | --child illegal-address|checked|trap|"
                       "assert|misaligned|job <first> <poison>|supervise]\n");
  return wb::kExitUsage;
}

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  try {
    if (!args.empty() && args[0] == "--child") return childMain({args.begin() + 1, args.end()});
    wb::checkEnvironment(environmentUses());
    CU_CHECK(cuInit(0));  // the parent checks for a driver first, so a machine without one hears why
    // and for its image: a damaged one stops it here, not once in every child it would start.
    wb::verifiedImagePath("faults.fatbin");
    if (!args.empty() && args[0] == "--supervise") return supervise() ? wb::kExitOk : wb::kExitDriverError;
    if (!args.empty()) return childMain(args);

    // The children of steps 1, 2, 4 and 5 start now and run side by side; each step reads its own.
    // Step 5's is the supervisor, which starts its workers one after the other.
    auto supervisor = startChild({"supervise"});
    auto illegal = startChild({"illegal-address"});
    std::pair<const char*, std::future<wb::ProcessEnd>> others[] = {
        {"trap", startChild({"trap"})}, {"assert", startChild({"assert"})}, {"misaligned", startChild({"misaligned"})}};
    FindRuns finding;

    wb::step(1, "A fault, call by call");
    const wb::ProcessEnd first = illegal.get();
    show(first);
    expectCall(first.output, "cuLaunchKernel(write_to, 0x10)", true);
    expectCall(first.output, "cuMemcpyDtoH of an unrelated buffer", false);
    expectCall(first.output, "cuCtxCreate of a new context on the device", false);
    expectCall(first.output, "cuMemAlloc after the reset", false);
    wb::step(2, "Other faults");
    for (auto& [which, run] : others) {
      std::printf("%s:\n", which);
      const wb::ProcessEnd end = run.get();
      show(end);
      expectCall(end.output, "cuCtxSynchronize", false);
      expectCall(end.output, "cuMemAlloc afterwards", false);
    }
    wb::step(3, "Errors that are not sticky");
    notSticky();
    wb::step(4, "Finding the faulting launch");
    findTheLaunch(finding);
    wb::step(5, "A supervisor that finishes the job");
    const wb::ProcessEnd supervised = supervisor.get();
    std::printf("%s", supervised.output.c_str());
    wb::expect(supervised.code == 0, "the job finished by two workers with the right sum",
               "the supervisor: " + howItEnded(supervised));
    return wb::kExitOk;
  } catch (...) {
    return wb::reportFatal(std::current_exception());
  }
}
