// What lesson 26's suites (tests/lesson26_checkpoint.cpp) and its exercise checks
// (tests/exercises/exercise26_checkpoint.cpp) both stand on: the child processes they checkpoint, and
// the parent's side of talking to them. A child is the test binary again, running one child test
// case with a channel (the messages and the Child of tests/lesson17_processes.hpp, every wait with a
// deadline). It holds device memory with a pattern it can check on the GPU (kernels/checkpoint.cu),
// and on the parent's word a kernel pending in a stream (the gate, common/gate.hpp) or a CUDA call
// from a second thread. It answers "outcome" and "returned?" from host memory alone, so it answers
// while the parent holds it locked.
#pragma once

#include "gate.hpp"
#include "lesson17_processes.hpp"
#include "support.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace l26 {

using l17::Note;
using l17::note;
using l17::said;

constexpr unsigned kChildSeconds = 60;
constexpr double kChildWaitSeconds = 30;  // how long a child waits for the parent's next word
constexpr double kGateSeconds = 0.3;      // a child's pending kernel gives up after this
constexpr size_t kOnDevice0 = 256u << 20, kOnDevice1 = 32u << 20;  // the spread child's buffers

// Whether this build and this driver have the checkpoint calls (CUDA 12.8); why not, or "".
inline std::string noCheckpointCalls() {
  wbt::initDriver();
  int driver = 0;
  CU_CHECK(cuDriverGetVersion(&driver));
  if (CUDA_VERSION < 12080)
    return "built with CUDA " + std::to_string(CUDA_VERSION) + ": the cuCheckpointProcess* calls came with 12.8";
  if (driver < 12080) return "driver " + std::to_string(driver) + ": the cuCheckpointProcess* calls came with 12.8";
  // Observed with driver 580: under compute-sanitizer cuCheckpointProcessGetState answered
  // CUDA_ERROR_NOT_SUPPORTED for a child that runs, which the same call without it did not.
  if (wb::underSanitizer())
    return "under compute-sanitizer (WORKBOOK_UNDER_SANITIZER): it answers the cuCheckpointProcess* calls "
           "with CUDA_ERROR_NOT_SUPPORTED";
  return "";
}

// ---- In a child --------------------------------------------------------------------------------

// kernels/checkpoint.cu's kernels, as functions of the current context.
struct PatternKernels {
  CUfunction fill = nullptr, misses = nullptr;
  explicit PatternKernels(CUlibrary library)
      : fill(wbt::functionOf(library, "pattern_fill")), misses(wbt::functionOf(library, "pattern_misses")) {}
};

struct Buffer {
  CUdeviceptr ptr = 0;
  size_t bytes = 0;
  uint32_t seed = 0;
};

inline void fillPattern(const PatternKernels& k, const Buffer& b) {
  CUdeviceptr data = b.ptr;
  unsigned long long words = b.bytes / 4;
  unsigned seed = b.seed;
  void* args[] = {&data, &words, &seed};
  CU_CHECK(cuLaunchKernel(k.fill, 1024, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr));
  CU_CHECK(cuCtxSynchronize());
}

// How many words of b differ from its pattern, counted on the GPU (b is of the current context).
inline uint64_t missesIn(const PatternKernels& k, const Buffer& b) {
  wbt::DeviceBuffer counter(sizeof(unsigned long long));
  CU_CHECK(cuMemsetD32(counter.get(), 0, 2));
  CUdeviceptr data = b.ptr, total = counter.get();
  unsigned long long words = b.bytes / 4;
  unsigned seed = b.seed;
  void* args[] = {&data, &words, &seed, &total};
  CU_CHECK(cuLaunchKernel(k.misses, 1024, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr));
  unsigned long long misses = 0;
  CU_CHECK(cuMemcpyDtoH(&misses, total, sizeof misses));
  return misses;
}

inline CUlibrary loadLibrary(const char* image) {
  CUlibrary library = nullptr;
  CU_CHECK(cuLibraryLoadFromFile(&library, wb::verifiedImagePath(image).c_str(), nullptr, nullptr, 0, nullptr,
                                 nullptr, 0));
  return library;
}

using l17::tell;

// A second thread of a child: its context set at once, while the child is RUNNING; then, when told,
// one CUDA call, a copy of one word. `started` is set just before the call, `returned` once it is
// back; reading them needs no CUDA call, so the child answers while it is locked.
struct Caller {
  std::mutex m;
  std::condition_variable told;
  CUdeviceptr first = 0;  // non-zero: make the call
  bool quit = false;
  std::atomic<bool> ready{false}, started{false}, returned{false};
  CUresult rc = CUDA_ERROR_UNKNOWN;
  uint32_t word = 0;
  std::thread thread;
  explicit Caller(CUcontext ctx) : thread([this, ctx] { run(ctx); }) {
    while (!ready) std::this_thread::yield();
  }
  void run(CUcontext ctx) {
    cuCtxSetCurrent(ctx);
    ready = true;
    std::unique_lock<std::mutex> lock(m);
    told.wait(lock, [this] { return first != 0 || quit; });
    lock.unlock();
    if (quit) return;
    started = true;
    rc = cuMemcpyDtoH(&word, first, sizeof word);
    returned = true;
  }
  void call(CUdeviceptr p) {
    {
      std::lock_guard<std::mutex> hold(m);
      first = p;
    }
    told.notify_one();
    while (!started) std::this_thread::yield();
  }
  ~Caller() {
    {
      std::lock_guard<std::mutex> hold(m);
      quit = true;
    }
    told.notify_one();
    thread.join();
  }
};

// The holder: a context on device 0; says "ready" with its pid, then serves, until "quit" or until
// the parent says nothing for kChildWaitSeconds:
//   alloc (bytes, seed) -> allocated (address)     verify -> verified (words that differ, words)
//   free -> freed                                  hold -> holding (a gate kernel pending in a stream)
//   outcome -> outcome (the gate's outcome)        settle -> settled (outcome; then opens it, waits)
//   call -> calling (a second thread is about to copy the first word of the first buffer)
//   returned? -> returned (1 once that call is back)   join -> joined (its CUresult, the word, the seed)
inline void runHolder(int parent) {
  wbt::RetainedPrimary primary(wbt::deviceKeepingPrimary(0));
  wbt::Pushed current(primary.get());
  const CUlibrary patterns = loadLibrary("checkpoint.fatbin"), streams = loadLibrary("streams.fatbin");
  const PatternKernels k(patterns);
  const wb::StreamKernels gates = wb::StreamKernels::load(streams);  // loaded before any gate closes
  std::vector<Buffer> held;
  {
    wbt::Stream stream;
    std::unique_ptr<wb::Gate> gate;  // after the stream: opened before the stream waits
    Caller caller(primary.get());
    tell(parent, note("ready", getpid()));
    Note n;
    while (wb::receiveMessage(parent, &n, sizeof n, nullptr, kChildWaitSeconds) == wb::Received::Message &&
           !said(n, "quit")) {
      if (said(n, "alloc")) {
        held.push_back({0, static_cast<size_t>(n.v[0]), static_cast<uint32_t>(n.v[1])});
        CU_CHECK(cuMemAlloc(&held.back().ptr, held.back().bytes));
        fillPattern(k, held.back());
        tell(parent, note("allocated", static_cast<int64_t>(held.back().ptr)));
      } else if (said(n, "verify")) {
        int64_t misses = 0, words = 0;
        for (const Buffer& b : held) misses += missesIn(k, b), words += b.bytes / 4;
        tell(parent, note("verified", misses, words));
      } else if (said(n, "free")) {
        for (const Buffer& b : held) CU_CHECK(cuMemFree(b.ptr));
        held.clear();
        tell(parent, note("freed"));
      } else if (said(n, "hold")) {
        gate = std::make_unique<wb::Gate>(gates.gate, stream.get(), kGateSeconds);
        tell(parent, note("holding"));
      } else if (said(n, "outcome")) {
        tell(parent, note("outcome", gate ? gate->outcome() : 0));
      } else if (said(n, "settle")) {
        const int64_t outcome = gate ? gate->outcome() : 0;
        gate.reset();
        tell(parent, note("settled", outcome));
      } else if (said(n, "call")) {
        caller.call(held.at(0).ptr);
        tell(parent, note("calling"));
      } else if (said(n, "returned?")) {
        tell(parent, note("returned", caller.returned ? 1 : 0));
      } else if (said(n, "join")) {
        while (!caller.returned) std::this_thread::yield();  // unlocked by now: the call comes back
        tell(parent, note("joined", caller.rc, caller.word, held.at(0).seed));  // word 0 of a pattern: its seed
      }
    }
  }
  for (const Buffer& b : held) cuMemFree(b.ptr);
  cuLibraryUnload(streams);
  cuLibraryUnload(patterns);
}

// The spread: a buffer in the primary context of every device, kOnDevice0 bytes on device 0 and
// kOnDevice1 on each other one, each with a pattern of its own, so that every device is one it has
// used. Says "ready" (pid), then answers each "verify" with "verified": the words that differ on
// device 0, on device 1 and on all the others, and the ordinal that the pointer of the buffer made
// on device 1 names now (-1 with one device).
inline void runSpread(int parent) {
  const int count = wbt::initDriver();
  const CUlibrary patterns = loadLibrary("checkpoint.fatbin");
  std::vector<std::unique_ptr<wbt::RetainedPrimary>> primaries;
  std::vector<Buffer> buffers;
  for (int d = 0; d < count; ++d) {
    primaries.push_back(std::make_unique<wbt::RetainedPrimary>(wbt::device(d)));
    wbt::Pushed here(primaries.back()->get());
    buffers.push_back({0, d == 0 ? kOnDevice0 : kOnDevice1, 0xD0D0u + static_cast<uint32_t>(d)});
    CU_CHECK(cuMemAlloc(&buffers.back().ptr, buffers.back().bytes));
    fillPattern(PatternKernels(patterns), buffers.back());
  }
  tell(parent, note("ready", getpid()));
  Note n;
  while (wb::receiveMessage(parent, &n, sizeof n, nullptr, kChildWaitSeconds) == wb::Received::Message &&
         said(n, "verify")) {
    Note answer = note("verified", 0, 0, 0, -1);
    for (int d = 0; d < count; ++d) {
      wbt::Pushed here(primaries[d]->get());
      answer.v[std::min(d, 2)] += static_cast<int64_t>(missesIn(PatternKernels(patterns), buffers[d]));
      int ordinal = -1;
      if (d == 1) CU_CHECK(cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, buffers[d].ptr));
      if (d == 1) answer.v[3] = ordinal;
    }
    tell(parent, answer);
  }
  for (int d = 0; d < count; ++d) {
    wbt::Pushed here(primaries[d]->get());
    cuMemFree(buffers[d].ptr);
  }
  cuLibraryUnload(patterns);
}

// ---- In the parent -------------------------------------------------------------------------------

// A child of this binary running one child test case, and its pid once it has said "ready".
struct Child : l17::Child {
  Child(const char* testCase, const std::vector<std::string>& env) : l17::Child(testCase, env, kChildSeconds) {}
  int pid = 0;
  // Its first message: "ready" (pid kept), or orElse where the child may say that instead.
  Note hello(const char* orElse = nullptr) {
    Note n;
    if (!channel.receive(n, l17::kReplySeconds) || !(said(n, "ready") || (orElse && said(n, orElse))))
      FAIL("the child did not say it was ready; it ended with signal " << channel.end().signal << ", exit code "
                                                                        << channel.end().code << ":\n"
                                                                        << channel.end().output);
    if (said(n, "ready")) pid = static_cast<int>(n.v[0]);
    return n;
  }
  Note ask(const Note& n, const char* answer) {
    say(n);
    return hear(answer);
  }
  int64_t wordsWrong() { return ask(note("verify"), "verified").v[0]; }
  // Before l17::Child tells it to quit: a child left locked would hang in its first CUDA call.
  ~Child();
};

// Whether a thread tid belongs to process pid.
inline bool threadOf(int pid, int tid) {
  return std::ifstream("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid)).good();
}

// The resident memory of a process (VmRSS of /proc/<pid>/status), in bytes.
inline size_t residentBytes(int pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string word;
  size_t kib = 0;
  while (status >> word)
    if (word == "VmRSS:" && status >> kib) break;
  return kib * 1024;
}

#if CUDA_VERSION >= 12080
inline CUprocessState stateOf(int pid) {
  CUprocessState s = CU_PROCESS_STATE_FAILED;
  CU_CHECK(cuCheckpointProcessGetState(pid, &s));
  return s;
}

inline CUresult lockWithin(int pid, unsigned ms) {
  CUcheckpointLockArgs args{};
  args.timeoutMs = ms;
  return cuCheckpointProcessLock(pid, &args);
}

// Whatever state a check left a child in, back to RUNNING (a failed assertion may leave it locked).
inline void backToRunning(int pid) {
  CUprocessState s = CU_PROCESS_STATE_RUNNING;
  if (pid <= 0 || cuCheckpointProcessGetState(pid, &s) != CUDA_SUCCESS) return;
  if (s == CU_PROCESS_STATE_CHECKPOINTED) cuCheckpointProcessRestore(pid, nullptr);
  if (cuCheckpointProcessGetState(pid, &s) == CUDA_SUCCESS && s == CU_PROCESS_STATE_LOCKED)
    cuCheckpointProcessUnlock(pid, nullptr);
}

struct Settle {
  int pid;
  ~Settle() { backToRunning(pid); }
};

inline Child::~Child() { backToRunning(pid); }
#else
inline Child::~Child() {}
#endif

}  // namespace l26
