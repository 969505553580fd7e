// Lesson 26: checkpoint and restore: suspend another process's GPU state and bring it back.
//
// What you learn: since CUDA 12.8 one process can take another's GPU state away and give it back,
// by process id: lock (its further CUDA calls block; with a timeout, so the caller never waits for
// ever), checkpoint (its device memory goes to its host memory, the GPU is released), restore (onto
// other GPUs of the same chip with CUDA 13.0's gpuPairs), unlock. A child holding device memory goes
// through every state: what it holds checkpointed, what the lock waits for, a call it makes while
// locked, each call in the wrong state, on two GPUs a restore onto the other one; then checkpoint and
// restore against a pinned copy and the PCIe link. Built with a cuda.h older than 12.8 every step is
// left out; with 12.8 or 12.9 step 6 too (their CUcheckpointRestoreArgs has no gpuPairs).
//
// APIs: cuCheckpointProcessGetState, cuCheckpointProcessGetRestoreThreadId, cuCheckpointProcessLock,
//       cuCheckpointProcessCheckpoint, cuCheckpointProcessRestore, cuCheckpointProcessUnlock,
//       cuDeviceGetUuid, cuMemGetInfo, cuMemAllocHost, cuMemcpyDtoH, cuMemcpyHtoD, cuDeviceGetPCIBusId;
//       in the child: cuMemAlloc, cuLibraryLoadFromFile, cuLaunchKernel, cuPointerGetAttribute
// Run:  ctest -R lesson26   (or build/lessons/lesson26-checkpoint [--csv lesson26-figure.csv])
#include "channel.hpp"
#include "figure.hpp"
#include "gate.hpp"
#include "needs.hpp"
#include "nvml.hpp"
#include "process.hpp"
#include "workbook.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

namespace {
const char* const kTitles[] = {"Lock, checkpoint, restore, unlock", "What a checkpointed process holds",
                               "What the lock waits for", "A call made while the process is locked",
                               "Calls in the wrong state", "Restoring onto the other GPU",
                               "Checkpoint and restore against a pinned copy"};
constexpr int kSteps = 7;
constexpr double kReplySeconds = 30;  // how long one side waits for the other's next message
constexpr double kGateSeconds = 0.5;  // the child's pending kernel of step 3 gives up after this
constexpr size_t kOnDevice0 = 1u << 30, kOnDevice1 = 64u << 20;  // step 6's child holds these on 0, on each other

// ---- What parent and children say to each other: one datagram, a word and six numbers -----------
struct Note {
  char what[16] = {};
  unsigned long long v[6] = {};
};
Note note(const char* what, unsigned long long a = 0, unsigned long long b = 0, unsigned long long c = 0) {
  Note n{{}, {a, b, c}};
  std::snprintf(n.what, sizeof n.what, "%s", what);
  return n;
}
bool said(const Note& n, const char* what) { return std::strncmp(n.what, what, sizeof n.what) == 0; }
void tell(int parent, const Note& n) {
  if (!wb::sendMessage(parent, &n, sizeof n)) throw std::runtime_error("cannot send to the parent");
}

// ---- The children ----------------------------------------------------------------------------------
// Device memory that a kernel of kernels/checkpoint.cu filled with the pattern of seed.
struct Buffer {
  CUdeviceptr ptr = 0;
  size_t bytes = 0;
  unsigned seed = 0;
};
// Launches pattern_fill (which reads the first three arguments, so the counter stays 0) or
// pattern_misses over b, in the current context, and waits; returns the words of b that differ.
unsigned long long runPattern(CUlibrary library, const char* kernel, const Buffer& b) {
  CUkernel k = nullptr;
  CUfunction f = nullptr;
  CU_CHECK(cuLibraryGetKernel(&k, library, kernel));
  CU_CHECK(cuKernelGetFunction(&f, k));
  CUdeviceptr counter = 0, data = b.ptr;
  CU_CHECK(cuMemAlloc(&counter, sizeof(unsigned long long)));
  CU_CHECK(cuMemsetD32(counter, 0, 2));
  unsigned long long words = b.bytes / 4, misses = 0;
  unsigned seed = b.seed;
  void* args[] = {&data, &words, &seed, &counter};
  CU_CHECK(cuLaunchKernel(f, 1024, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr));
  CU_CHECK(cuMemcpyDtoH(&misses, counter, sizeof misses));
  CU_CHECK(cuMemFree(counter));
  return misses;
}
Buffer allocate(CUlibrary patterns, size_t bytes, unsigned seed) {
  Buffer b{0, bytes, seed};
  CU_CHECK(cuMemAlloc(&b.ptr, bytes));
  runPattern(patterns, "pattern_fill", b);
  return b;
}
CUlibrary loadLibrary(const char* image) {
  CUlibrary library = nullptr;
  CU_CHECK(cuLibraryLoadFromFile(&library, wb::verifiedImagePath(image).c_str(), nullptr, nullptr, 0, nullptr,
                                 nullptr, 0));
  return library;
}

// The child's second thread, for step 4. Reading `started` and `returned` needs no CUDA call.
struct Caller {
  std::promise<CUdeviceptr> told;  // the address of the word to copy, or 0: no call
  std::future<CUdeviceptr> first = told.get_future();
  std::atomic<bool> ready{false}, started{false}, returned{false};
  CUresult rc = CUDA_ERROR_UNKNOWN;
  unsigned word = 0;
  std::thread thread;
  explicit Caller(CUcontext ctx) : thread([this, ctx] { run(ctx); }) {
    while (!ready) std::this_thread::yield();
  }
  //! [caller]
  // The second thread: its context set at once, while the child is RUNNING; then, when told, one
  // call. `started` is set just before the call, `returned` once it is back.
  void run(CUcontext ctx) {
    cuCtxSetCurrent(ctx);  // a new thread has no current context (lesson 03)
    ready = true;
    const CUdeviceptr p = first.get();
    if (p == 0) return;
    started = true;
    rc = cuMemcpyDtoH(&word, p, sizeof word);
    returned = true;
  }
  // In the child's main thread, on the parent's "call": returns once the call is about to be made.
  void call(CUdeviceptr p) {
    told.set_value(p);
    while (!started) std::this_thread::yield();
  }
  //! [caller]
  ~Caller() {
    if (!started) told.set_value(0);  // never told to call: the thread ends
    thread.join();
  }
};

// The child of steps 1-5 and 7: a context on device 0, and, on the parent's word, memory with a
// pattern, a gate kernel pending in a stream (common/gate.hpp), a call from a second thread. It
// answers "outcome" and "returned?" from host memory alone, so it answers while it is locked.
int childHolder(int parent) {
  CU_CHECK(cuInit(0));
  CUcontext ctx = nullptr;
  CU_CHECK(cuDevicePrimaryCtxRetain(&ctx, 0));
  CU_CHECK(cuCtxSetCurrent(ctx));
  const CUlibrary patterns = loadLibrary("checkpoint.fatbin"), streams = loadLibrary("streams.fatbin");
  const wb::StreamKernels gates = wb::StreamKernels::load(streams);  // loaded before any gate closes
  CUstream stream = nullptr;
  CU_CHECK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  std::vector<Buffer> held;
  std::unique_ptr<wb::Gate> gate;
  Caller caller(ctx);
  tell(parent, note("ready", getpid()));
  Note n;
  while (wb::receiveMessage(parent, &n, sizeof n, nullptr, kReplySeconds) == wb::Received::Message &&
         !said(n, "quit")) {
    if (said(n, "alloc")) {
      held.push_back(allocate(patterns, n.v[0], static_cast<unsigned>(n.v[1])));
      tell(parent, note("allocated", held.back().ptr));
    } else if (said(n, "verify")) {
      unsigned long long misses = 0;
      for (const Buffer& b : held) misses += runPattern(patterns, "pattern_misses", b);
      tell(parent, note("verified", misses));
    } else if (said(n, "free")) {
      for (const Buffer& b : held) CU_CHECK(cuMemFree(b.ptr));
      held.clear();
      tell(parent, note("freed"));
    } else if (said(n, "hold")) {
      gate = std::make_unique<wb::Gate>(gates.gate, stream, kGateSeconds);
      tell(parent, note("holding"));
    } else if (said(n, "outcome")) {
      tell(parent, note("outcome", gate ? gate->outcome() : 0));
    } else if (said(n, "settle")) {
      gate.reset();  // opens the gate and waits for the kernel
      tell(parent, note("settled"));
    } else if (said(n, "call")) {
      caller.call(held.at(0).ptr);
      tell(parent, note("calling"));
    } else if (said(n, "returned?")) {
      tell(parent, note("returned", caller.returned ? 1 : 0));  // host memory only: no CUDA call
    } else if (said(n, "join")) {
      while (!caller.returned) std::this_thread::yield();  // it is unlocked by now: the call comes back
      tell(parent, note("joined", caller.rc, caller.word, held.at(0).seed));  // word 0 is the seed
    }
  }
  gate.reset();
  for (const Buffer& b : held) cuMemFree(b.ptr);
  cuStreamDestroy(stream);
  cuLibraryUnload(streams);
  cuLibraryUnload(patterns);
  cuDevicePrimaryCtxRelease(0);
  return wb::kExitOk;
}

// The child of step 6: a buffer with a pattern of its own in every device's primary context (so it
// used every device). It answers with the words that differ on device 0, on device 1 and on the
// others, and the device the pointer of the buffer made on device 1 names now.
int childSpread(int parent) {
  CU_CHECK(cuInit(0));
  int count = 0;
  CU_CHECK(cuDeviceGetCount(&count));
  if (count < 2) {
    tell(parent, note("one-device"));
    return wb::kExitOk;
  }
  const CUlibrary patterns = loadLibrary("checkpoint.fatbin");
  std::vector<CUcontext> ctx(count);
  std::vector<Buffer> buffers;
  for (int d = 0; d < count; ++d) {
    CU_CHECK(cuDevicePrimaryCtxRetain(&ctx[d], d));
    CU_CHECK(cuCtxSetCurrent(ctx[d]));
    buffers.push_back(allocate(patterns, d == 0 ? kOnDevice0 : kOnDevice1, 0xD0D0u + d));
  }
  tell(parent, note("ready", getpid()));
  Note n;
  while (wb::receiveMessage(parent, &n, sizeof n, nullptr, kReplySeconds) == wb::Received::Message &&
         said(n, "verify")) {
    Note answer = note("verified");
    for (int d = 0; d < count; ++d) {
      CU_CHECK(cuCtxSetCurrent(ctx[d]));
      answer.v[std::min(d, 2)] += runPattern(patterns, "pattern_misses", buffers[d]);
      int ordinal = -1;
      if (d == 1) CU_CHECK(cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, buffers[d].ptr));
      if (d == 1) answer.v[3] = static_cast<unsigned long long>(ordinal);
    }
    tell(parent, answer);
  }
  for (int d = 0; d < count; ++d) {
    cuCtxSetCurrent(ctx[d]);
    cuMemFree(buffers[d].ptr);
    cuDevicePrimaryCtxRelease(d);
  }
  cuLibraryUnload(patterns);
  return wb::kExitOk;
}

// ---- The parent's side ----------------------------------------------------------------------------
#if CUDA_VERSION >= 12080
constexpr unsigned kChildSeconds = 60;    // every child's time limit: nothing here waits longer
constexpr unsigned kShortLockMs = 100;    // a lock that is allowed to give up (step 3)
constexpr unsigned kLockLimitMs = 20000;  // every other lock: it never waits forever
constexpr size_t kHeld = 512u << 20;      // what the child allocates for step 2
const size_t kFigureSizes[] = {64u << 20, 256u << 20, 1u << 30};
// Unset in every child, whatever the user's shell sets: step 3's kernel must leave its stream busy.
const std::vector<std::string> kControlled = {"CUDA_LAUNCH_BLOCKING"};

// A child of this program, started at once, and its process id once it said "ready".
struct Child {
  explicit Child(const char* role) : channel({wb::selfPath(), "--child", role}, kControlled, kChildSeconds) {}
  ~Child() {  // whatever state a failed step left it in, back to RUNNING first, so that it can end
    CUprocessState s = CU_PROCESS_STATE_RUNNING;
    if (pid > 0 && cuCheckpointProcessGetState(pid, &s) == CUDA_SUCCESS && s == CU_PROCESS_STATE_CHECKPOINTED)
      cuCheckpointProcessRestore(pid, nullptr);
    if (pid > 0 && cuCheckpointProcessGetState(pid, &s) == CUDA_SUCCESS && s == CU_PROCESS_STATE_LOCKED)
      cuCheckpointProcessUnlock(pid, nullptr);
    channel.send(note("quit"));
  }
  wb::ChildChannel channel;
  int pid = 0;
  // The child's next message, which must be `what` (or orElse): otherwise the lesson stops and says
  // what the child did instead, how it ended and what it printed.
  Note hear(const char* what, const char* orElse = nullptr) {
    Note n;
    const bool got = channel.receive(n, kReplySeconds);
    if (got && (said(n, what) || (orElse && said(n, orElse)))) return n;
    channel.send(note("quit"));
    const wb::ProcessEnd& end = channel.end();
    const std::string instead = got ? "it said \"" + std::string(n.what, strnlen(n.what, sizeof n.what)) + "\""
                                    : std::string("it said nothing within its time");
    throw wb::Contradiction(std::string("the child saying \"") + what + "\"",
                            instead + "; it ended with signal " + std::to_string(end.signal) + ", exit code " +
                                std::to_string(end.code) + ":\n" + end.output);
  }
  Note ask(const Note& n, const char* answer) {
    channel.send(n);
    return hear(answer);
  }
};

size_t freeMemory(CUcontext in = nullptr) {  // device-wide, asked in `in` or the current context
  if (in) CU_CHECK(cuCtxSetCurrent(in));
  size_t free = 0, total = 0;
  CU_CHECK(cuMemGetInfo(&free, &total));
  return free;
}
std::string moved(size_t before, size_t after) {
  if (after == before) return "did not change";
  return after > before ? "rose by " + wb::bytes(after - before) : "fell by " + wb::bytes(before - after);
}
size_t residentBytes(int pid) {  // VmRSS of /proc/<pid>/status, in bytes
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string word;
  size_t kib = 0;
  while (status >> word)
    if (word == "VmRSS:" && status >> kib) break;
  return kib * 1024;
}
const char* stateName(CUprocessState s) {
  const char* const names[] = {"RUNNING", "LOCKED", "CHECKPOINTED", "FAILED"};  // cuda.h's values 0 to 3
  return static_cast<unsigned>(s) < 4 ? names[s] : "a state this toolkit does not name";  // newer drivers add states
}
CUprocessState stateOf(int pid) {
  CUprocessState s = CU_PROCESS_STATE_FAILED;
  CU_CHECK(cuCheckpointProcessGetState(pid, &s));
  return s;
}

//! [lock]
// The lock, with a timeout: the reference leaves a process whose lock timed out RUNNING, and the
// caller never waits longer than ms. The other fields are reserved and must be zero.
CUresult lockWithin(int pid, unsigned ms) {
  CUcheckpointLockArgs args{};
  args.timeoutMs = ms;  // 0 would mean no timeout at all
  return cuCheckpointProcessLock(pid, &args);
}
//! [lock]
//! [lifecycle]
// The four calls in order, the state after each, and the time each took. Restore leaves the process
// LOCKED: only the unlock lets its calls through.
void lifecycle(Child& holder) {
  holder.ask(note("alloc", 1u << 20, 0x5EED1u), "allocated");
  const int pid = holder.pid;
  int tid = 0;
  CU_CHECK(cuCheckpointProcessGetRestoreThreadId(pid, &tid));
  const std::string task = "/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid);
  const bool itsThread = std::ifstream(task).good();  // one of the child's threads
  const CUprocessState before = stateOf(pid);
  CUprocessState after[4];
  double ms[4];
  for (int call = 0; call < 4; ++call) {
    const wb::Stopwatch clock;
    if (call == 0) CU_CHECK(lockWithin(pid, kLockLimitMs));
    if (call == 1) CU_CHECK(cuCheckpointProcessCheckpoint(pid, nullptr));
    if (call == 2) CU_CHECK(cuCheckpointProcessRestore(pid, nullptr));
    if (call == 3) CU_CHECK(cuCheckpointProcessUnlock(pid, nullptr));
    ms[call] = clock.ms();
    after[call] = stateOf(pid);
  }
  const Note check = holder.ask(note("verify"), "verified");
  //! [lifecycle]
  std::printf("the child (pid %d) holds %s of device memory with a pattern; its CUDA restore thread is %d, %s\n",
              pid, wb::bytes(1u << 20).c_str(), tid, itsThread ? "one of the child's threads" : "NOT a thread of it");
  std::printf("  state before: %s\n", stateName(before));
  const char* calls[4] = {"cuCheckpointProcessLock", "cuCheckpointProcessCheckpoint", "cuCheckpointProcessRestore",
                          "cuCheckpointProcessUnlock"};
  for (int call = 0; call < 4; ++call)
    std::printf("  %-30s CUDA_SUCCESS after %7.1f ms: %s\n", calls[call], ms[call], stateName(after[call]));
  std::printf("  then the child counted its words on the GPU: %llu differ from the pattern\n", check.v[0]);
  wb::expect(before == CU_PROCESS_STATE_RUNNING && after[0] == CU_PROCESS_STATE_LOCKED &&
                 after[1] == CU_PROCESS_STATE_CHECKPOINTED && after[2] == CU_PROCESS_STATE_LOCKED &&
                 after[3] == CU_PROCESS_STATE_RUNNING,
             "the states RUNNING, LOCKED, CHECKPOINTED, LOCKED, RUNNING", "another sequence (printed above)");
  wb::expect(itsThread, "the restore thread being a thread of the child", "thread " + std::to_string(tid));
  wb::expect(check.v[0] == 0, "the child's memory intact after the restore",
             std::to_string(check.v[0]) + " words differ");
}

//! [footprint]
// What the child holds, seen from here (this process's cuMemGetInfo is device-wide) and in the
// child's resident host memory, running and checkpointed.
void footprint(Child& holder) {
  holder.ask(note("alloc", kHeld, 0x5EED2u), "allocated");
  const size_t free0 = freeMemory(), rss0 = residentBytes(holder.pid);
  CU_CHECK(lockWithin(holder.pid, kLockLimitMs));
  CU_CHECK(cuCheckpointProcessCheckpoint(holder.pid, nullptr));
  const size_t free1 = freeMemory(), rss1 = residentBytes(holder.pid);
  CU_CHECK(cuCheckpointProcessRestore(holder.pid, nullptr));
  const size_t free2 = freeMemory(), rss2 = residentBytes(holder.pid);
  CU_CHECK(cuCheckpointProcessUnlock(holder.pid, nullptr));
  const Note check = holder.ask(note("verify"), "verified");
  //! [footprint]
  std::printf("the child holds %s more (%s in all, beside its context)\n", wb::bytes(kHeld).c_str(),
              wb::bytes(kHeld + (1u << 20)).c_str());
  std::printf("  checkpointed: free device memory, seen from this process, %s; the child's resident host memory "
              "%s\n", moved(free0, free1).c_str(), moved(rss0, rss1).c_str());
  std::printf("  restored:     free device memory %s; the child's resident host memory %s\n",
              moved(free1, free2).c_str(), moved(rss1, rss2).c_str());
  std::printf("  the child's words after the restore: %llu differ\n", check.v[0]);
  wb::expect(free1 >= free0 + kHeld * 3 / 4 && free2 + kHeld * 3 / 4 <= free1,
             "the checkpointed child's device memory given back, and taken again by the restore",
             "free memory " + moved(free0, free1) + ", then " + moved(free1, free2));
  wb::expect(rss1 >= rss0 + kHeld / 2, "the child's memory held in its host memory while it is checkpointed",
             "its resident memory " + moved(rss0, rss1));
  wb::expect(check.v[0] == 0, "the child's memory intact", std::to_string(check.v[0]) + " words differ");
}

//! [lock-waits]
// The child's stream holds a kernel that waits kGateSeconds for a host write nobody makes: a lock
// with a short timeout, then one that may wait, and where the kernel stood at the checkpoint.
void lockWaits(Child& holder) {
  holder.ask(note("hold"), "holding");
  wb::Stopwatch clock;
  const CUresult shortLock = lockWithin(holder.pid, kShortLockMs);
  const double shortMs = clock.ms();
  const CUprocessState afterShort = stateOf(holder.pid);
  const auto atShort = holder.ask(note("outcome"), "outcome").v[0];
  double longMs = 0;
  if (shortLock != CUDA_SUCCESS) {
    clock = wb::Stopwatch();
    CU_CHECK(lockWithin(holder.pid, kLockLimitMs));
    longMs = clock.ms();
  }
  const auto atLock = holder.ask(note("outcome"), "outcome").v[0];
  CU_CHECK(cuCheckpointProcessCheckpoint(holder.pid, nullptr));
  const auto atCheckpoint = holder.ask(note("outcome"), "outcome").v[0];
  CU_CHECK(cuCheckpointProcessRestore(holder.pid, nullptr));
  CU_CHECK(cuCheckpointProcessUnlock(holder.pid, nullptr));
  holder.ask(note("settle"), "settled");
  //! [lock-waits]
  auto gateOutcome = [](unsigned long long o) {
    if (o == wb::Gate::Waiting) return "still waiting";
    return o == wb::Gate::Released ? "released" : "ended (gave up at its deadline)";
  };
  std::printf("the child launched a kernel that waits %.1f s for a write nobody makes, in a stream of its own\n",
              kGateSeconds);
  std::printf("  lock with timeoutMs %u: %s after %.1f ms; state %s; the kernel %s\n", kShortLockMs,
              wb::errorName(shortLock).c_str(), shortMs, stateName(afterShort), gateOutcome(atShort));
  if (shortLock != CUDA_SUCCESS)
    std::printf("  lock with timeoutMs %u: CUDA_SUCCESS after %.1f ms; the kernel %s\n", kLockLimitMs, longMs,
                gateOutcome(atLock));
  std::printf("  when cuCheckpointProcessCheckpoint returned, the kernel had %s\n",
              atCheckpoint == wb::Gate::Waiting ? "NOT ended" : "ended");
  if (shortLock != CUDA_SUCCESS)
    wb::expect(afterShort == CU_PROCESS_STATE_RUNNING, "a lock that timed out leaving the process RUNNING",
               stateName(afterShort));
  wb::expect(atCheckpoint != wb::Gate::Waiting, "the child checkpointed only once its pending kernel had ended",
             "the kernel was still waiting");
}

//! [locked-call]
// The child calls cuMemcpyDtoH from another thread while it is locked; the call is still out after
// a checkpoint and a restore, and comes back once the process is unlocked.
void lockedCall(Child& holder) {
  CU_CHECK(lockWithin(holder.pid, kLockLimitMs));
  holder.ask(note("call"), "calling");
  CU_CHECK(cuCheckpointProcessCheckpoint(holder.pid, nullptr));
  CU_CHECK(cuCheckpointProcessRestore(holder.pid, nullptr));
  const bool backWhileLocked = holder.ask(note("returned?"), "returned").v[0] != 0;
  CU_CHECK(cuCheckpointProcessUnlock(holder.pid, nullptr));
  const Note joined = holder.ask(note("join"), "joined");
  //! [locked-call]
  const CUresult rc = static_cast<CUresult>(joined.v[0]);
  std::printf("locked, then the child's second thread called cuMemcpyDtoH of its first word\n");
  std::printf("  after a checkpoint and a restore, still locked: the call had %s\n",
              backWhileLocked ? "RETURNED" : "not returned");
  std::printf("  after the unlock it returned %s with 0x%08llX (the pattern's first word is 0x%08llX)\n",
              wb::errorName(rc).c_str(), joined.v[1], joined.v[2]);
  wb::expect(!backWhileLocked, "a call made while the process is locked blocking until the unlock",
             "it returned while the process was locked");
  wb::expect(rc == CUDA_SUCCESS && joined.v[1] == joined.v[2], "the blocked call completing after the unlock",
             wb::errorName(rc));
}

//! [wrong-state]
// Each call where its state is not the one it requires; then a process id that names no process.
void wrongStates(Child& holder) {
  std::vector<std::tuple<const char*, CUresult, CUprocessState>> refusals;  // call, result, state after
  auto tryCall = [&](const char* call, CUresult rc) { refusals.push_back({call, rc, stateOf(holder.pid)}); };
  tryCall("RUNNING: checkpoint", cuCheckpointProcessCheckpoint(holder.pid, nullptr));
  tryCall("RUNNING: restore", cuCheckpointProcessRestore(holder.pid, nullptr));
  tryCall("RUNNING: unlock", cuCheckpointProcessUnlock(holder.pid, nullptr));
  CU_CHECK(lockWithin(holder.pid, kLockLimitMs));
  tryCall("LOCKED: lock", lockWithin(holder.pid, kShortLockMs));
  tryCall("LOCKED: restore", cuCheckpointProcessRestore(holder.pid, nullptr));
  CU_CHECK(cuCheckpointProcessCheckpoint(holder.pid, nullptr));
  tryCall("CHECKPOINTED: lock", lockWithin(holder.pid, kShortLockMs));
  tryCall("CHECKPOINTED: checkpoint", cuCheckpointProcessCheckpoint(holder.pid, nullptr));
  tryCall("CHECKPOINTED: unlock", cuCheckpointProcessUnlock(holder.pid, nullptr));
  CU_CHECK(cuCheckpointProcessRestore(holder.pid, nullptr));
  CU_CHECK(cuCheckpointProcessUnlock(holder.pid, nullptr));
  //! [wrong-state]
  std::printf("the child (pid %d), in each state, asked for a call that state does not allow:\n", holder.pid);
  bool allRefused = true, unchanged = true;
  for (const auto& [call, rc, after] : refusals) {
    std::printf("  %-26s %-28s state after: %s\n", call, wb::errorName(rc).c_str(), stateName(after));
    allRefused = allRefused && rc != CUDA_SUCCESS;
    const char* state = stateName(after);  // the state the call was made in begins its name
    unchanged = unchanged && std::strncmp(call, state, std::strlen(state)) == 0;
  }
  CUprocessState s = CU_PROCESS_STATE_RUNNING;
  int nobody = 4194304;
  std::ifstream("/proc/sys/kernel/pid_max") >> nobody;  // process ids are below pid_max
  const CUresult none = cuCheckpointProcessGetState(nobody, &s);
  std::printf("cuCheckpointProcessGetState of pid %d (pid_max: no process has it): %s\n", nobody,
              wb::errorName(none).c_str());
  const Note check = holder.ask(note("verify"), "verified");
  std::printf("the child's words afterwards: %llu differ\n", check.v[0]);
  wb::expect(allRefused && none != CUDA_SUCCESS, "every call in the wrong state refused", "one was accepted");
  wb::expect(unchanged && check.v[0] == 0, "the refused calls leaving the state and the memory as they were",
             "a state changed, or words differ");
}

#if CUDA_VERSION >= 13000
//! [remap]
// CUDA 13.0: restore with gpuPairs, one pair per GPU the child used (every one here), old UUID to new
// UUID. Devices 0 and 1 trade places: what was on device 0 goes to device 1 and the reverse; the
// others stay where they are, and still need their pair.
CUresult restoreSwapped(int pid, int devices) {
  std::vector<CUcheckpointGpuPair> pairs(devices);
  for (int d = 0; d < devices; ++d) {
    CU_CHECK(cuDeviceGetUuid(&pairs[d].oldUuid, d));
    CU_CHECK(cuDeviceGetUuid(&pairs[d].newUuid, d < 2 ? 1 - d : d));
  }
  CUcheckpointRestoreArgs args{};  // every reserved byte zero
  args.gpuPairs = pairs.data();
  args.gpuPairsCount = static_cast<unsigned>(devices);
  return cuCheckpointProcessRestore(pid, &args);
}
//! [remap]
// The reference's conditions for a restore onto another GPU: "enough memory and be of the same chip
// type as the old GPU". The name and compute capability stand for the chip; empty when both hold.
std::string whyNotSwapped(const size_t before[2]) {
  char names[2][128] = {};
  int cc[2][2] = {};
  for (int d = 0; d < 2; ++d) {
    CU_CHECK(cuDeviceGetName(names[d], sizeof names[d], d));
    CU_CHECK(cuDeviceGetAttribute(&cc[d][0], CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d));
    CU_CHECK(cuDeviceGetAttribute(&cc[d][1], CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d));
  }
  if (std::strcmp(names[0], names[1]) != 0 || cc[0][0] != cc[1][0] || cc[0][1] != cc[1][1])
    return std::string("devices 0 and 1 are not the same chip (") + names[0] + ", " + names[1] +
           "): the reference restores only onto \"the same chip type\"";
  if (before[1] < kOnDevice0 + (kOnDevice0 >> 2) || before[0] < kOnDevice1 + (kOnDevice1 >> 2))
    return "a device has too little free memory for what would move onto it (the reference: \"enough memory\")";
  return "";
}

void remap(Child& spread) {
  int devices = 0;
  CU_CHECK(cuDeviceGetCount(&devices));
  CUcontext ctx[2] = {}, previous = nullptr;
  CU_CHECK(cuCtxGetCurrent(&previous));
  size_t before[2];
  for (int d = 0; d < 2; ++d) {
    CU_CHECK(cuDevicePrimaryCtxRetain(&ctx[d], d));
    before[d] = freeMemory(ctx[d]);
  }
  if (const std::string why = whyNotSwapped(before); !why.empty()) {
    CU_CHECK(cuCtxSetCurrent(previous));
    for (int d = 0; d < 2; ++d) CU_CHECK(cuDevicePrimaryCtxRelease(d));
    std::printf("skipped: %s\n", why.c_str());
    return;
  }
  CU_CHECK(lockWithin(spread.pid, kLockLimitMs));
  CU_CHECK(cuCheckpointProcessCheckpoint(spread.pid, nullptr));
  const CUresult swapped = restoreSwapped(spread.pid, devices);
  if (swapped != CUDA_SUCCESS) CU_CHECK(cuCheckpointProcessRestore(spread.pid, nullptr));  // so that it goes on
  CU_CHECK(cuCheckpointProcessUnlock(spread.pid, nullptr));
  const Note check = spread.ask(note("verify"), "verified");
  const size_t after[2] = {freeMemory(ctx[0]), freeMemory(ctx[1])};
  CU_CHECK(cuCtxSetCurrent(previous));
  for (int d = 0; d < 2; ++d) CU_CHECK(cuDevicePrimaryCtxRelease(d));
  std::printf("the child (pid %d) holds %s on device 0 and %s on each other device\n", spread.pid,
              wb::bytes(kOnDevice0).c_str(), wb::bytes(kOnDevice1).c_str());
  std::printf("  lock, checkpoint, restore with gpuPairs {device 0 -> device 1, device 1 -> device 0%s}: %s; "
              "unlock\n", devices > 2 ? ", the others to themselves" : "", wb::errorName(swapped).c_str());
  for (int d = 0; d < 2; ++d)
    std::printf("  free memory of device %d, seen from this process: %s\n", d, moved(before[d], after[d]).c_str());
  std::printf("  the child's words that differ: %llu of those made on device 0, %llu on device 1; the pointer made "
              "on device 1 now names device %llu\n", check.v[0], check.v[1], check.v[3]);
  const size_t moves = (kOnDevice0 - kOnDevice1) / 2;
  wb::expect(swapped == CUDA_SUCCESS, "a restore onto the other GPU", wb::errorName(swapped));
  wb::expect(check.v[0] == 0 && check.v[1] == 0 && check.v[2] == 0, "the child's memory intact on its new GPUs",
             "words differ");
  wb::expect(after[0] >= before[0] + moves && after[1] + moves <= before[1],
             "the larger buffer's memory gone from device 0 to device 1",
             "device 0 " + moved(before[0], after[0]) + ", device 1 " + moved(before[1], after[1]));
}
#endif

//! [pinned-copy]
// What a pinned copy of `bytes` moves per second each way: copies of up to 256 MiB between one
// device buffer and one pinned buffer of this process, median of 3 runs.
std::pair<double, double> pinnedCopy(size_t bytes) {
  const size_t chunk = std::min(bytes, size_t{256} << 20);
  CUdeviceptr device = 0;
  void* pinned = nullptr;
  CU_CHECK(cuMemAlloc(&device, chunk));
  CU_CHECK(cuMemAllocHost(&pinned, chunk));
  std::vector<double> toHost, toDevice;
  for (int run = 0; run < 3; ++run) {
    wb::Stopwatch clock;
    for (size_t done = 0; done < bytes; done += chunk) CU_CHECK(cuMemcpyDtoH(pinned, device, chunk));
    toHost.push_back(bytes / (clock.ms() / 1000) / 1e9);
    clock = wb::Stopwatch();
    for (size_t done = 0; done < bytes; done += chunk) CU_CHECK(cuMemcpyHtoD(device, pinned, chunk));
    toDevice.push_back(bytes / (clock.ms() / 1000) / 1e9);
  }
  CU_CHECK(cuMemFreeHost(pinned));
  CU_CHECK(cuMemFree(device));
  std::sort(toHost.begin(), toHost.end());
  std::sort(toDevice.begin(), toDevice.end());
  return {toHost[1], toDevice[1]};
}
//! [pinned-copy]
wb::FigureTable figure(Child& holder) {
  struct Rate {
    size_t bytes;
    double checkpoint, restore, toHost, toDevice;  // GB/s
  };
  char busId[32] = {0};
  CU_CHECK(cuDeviceGetPCIBusId(busId, sizeof busId, 0));
  std::string why;
  const auto link = wb::nvml::pcieLink(busId, why);
  if (link)
    std::printf("device 0's link to the host, as NVML reports it: %s\n", link->describe().c_str());
  else
    std::printf("NVML did not say what links device 0 to the host (%s): no limit below\n", why.c_str());
  //! [figure]
  // The child grows to each size; its checkpoint and its restore are timed alone (the lock and the
  // unlock are not in the times), and its memory is checked after every restore.
  holder.ask(note("free"), "freed");
  std::vector<Rate> rates;
  size_t held = 0;
  for (size_t size : kFigureSizes) {
    holder.ask(note("alloc", size - held, 0xF1600u + rates.size()), "allocated");
    held = size;
    CU_CHECK(lockWithin(holder.pid, kLockLimitMs));
    wb::Stopwatch clock;
    CU_CHECK(cuCheckpointProcessCheckpoint(holder.pid, nullptr));
    const double checkpointS = clock.ms() / 1000;
    clock = wb::Stopwatch();
    CU_CHECK(cuCheckpointProcessRestore(holder.pid, nullptr));
    const double restoreS = clock.ms() / 1000;
    CU_CHECK(cuCheckpointProcessUnlock(holder.pid, nullptr));
    const Note check = holder.ask(note("verify"), "verified");
    wb::expect(check.v[0] == 0, "the child's memory intact after every restore", "words differ");
    const auto [toHost, toDevice] = pinnedCopy(size);
    rates.push_back({size, size / checkpointS / 1e9, size / restoreS / 1e9, toHost, toDevice});
  }
  //! [figure]
  wb::FigureTable table("bytes,way,GB/s");
  std::printf("the child's allocation per second of the call (checkpoint, restore; not a copy rate: the\n"
              "context's memory moves too), and a pinned copy of the same size here, GB/s\n"
              "  %10s  %10s  %10s  %14s  %14s\n", "held", "checkpoint", "restore", "pinned to host", "pinned to dev.");
  for (const Rate& r : rates) {
    std::printf("  %10s  %10.2f  %10.2f  %14.2f  %14.2f\n", wb::bytes(r.bytes).c_str(), r.checkpoint, r.restore,
                r.toHost, r.toDevice);
    table.row("%zu,checkpoint,%.3f", r.bytes, r.checkpoint);
    table.row("%zu,restore,%.3f", r.bytes, r.restore);
    table.row("%zu,pinned copy to host,%.3f", r.bytes, r.toHost);
    table.row("%zu,pinned copy to device,%.3f", r.bytes, r.toDevice);
  }
  // The columns divide the allocation by the call's time; a checkpoint copies the context's own
  // memory too, so they are no copy rate. The slope between the two largest sizes is closer to one:
  // what each added byte of allocation cost.
  if (rates.size() < 2) return table;
  const Rate &largest = rates.back(), &before = rates[rates.size() - 2];
  const double added = static_cast<double>(largest.bytes - before.bytes);
  const auto slope = [&](double big, double small) {
    return added / (largest.bytes / (big * 1e9) - before.bytes / (small * 1e9)) / 1e9;
  };
  std::printf("from %s to %s, per added byte: the checkpoint %.2f GB/s, the restore %.2f; a pinned copy %.2f "
              "to the host, %.2f back\n", wb::bytes(before.bytes).c_str(), wb::bytes(largest.bytes).c_str(),
              slope(largest.checkpoint, before.checkpoint), slope(largest.restore, before.restore),
              largest.toHost, largest.toDevice);
  if (link && link->bytesPerSecond() > 0) {
    const double limit = link->bytesPerSecond() / 1e9;
    table.row("0,limit: PCIe Gen%u x%u,%.3f", link->generation, link->width, limit);
    // A sanity bound on the timing, not a measure of the copy: no call moved its allocation faster
    // than the link could.
    for (const Rate& r : rates)
      wb::expect(r.checkpoint <= limit * 1.01 && r.restore <= limit * 1.01,
                 "no call timed faster than the link could move its allocation", wb::bytes(r.bytes) + " above it");
  }
  return table;
}

wb::FigureTable lesson(Child& holder, Child* spread) {
  // Both children are ready (their memory allocated) before anything is measured.
  holder.pid = static_cast<int>(holder.hear("ready").v[0]);
  [[maybe_unused]] const Note hello = spread ? spread->hear("ready", "one-device") : note("none");
  void (*const holderSteps[])(Child&) = {lifecycle, footprint, lockWaits, lockedCall, wrongStates};
  for (int i = 0; i < 5; ++i) {
    wb::step(i + 1, kTitles[i]);
    holderSteps[i](holder);
  }
  wb::step(6, kTitles[5]);
#if CUDA_VERSION >= 13000
  if (said(hello, "one-device")) {
    std::printf("skipped: one GPU is visible, and this step moves the child's state from one GPU to another\n");
  } else {
    spread->pid = static_cast<int>(hello.v[0]);
    remap(*spread);
  }
#else
  std::printf("left out: built with CUDA %d, whose CUcheckpointRestoreArgs has reserved fields only; CUDA 13.0 "
              "added gpuPairs, which move a process onto other GPUs\n", CUDA_VERSION);
#endif
  wb::step(7, kTitles[6]);
  return figure(holder);
}

#endif  // CUDA_VERSION >= 12080
void leaveOutEveryStep(const std::string& why) {  // where this run can make no checkpoint call
  for (int i = 0; i < kSteps; ++i) {
    wb::step(i + 1, kTitles[i]);
    std::printf("left out%s\n", why.c_str());
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  try {
    if (!args.empty() && args[0] == "--child") {
      const int channel = wb::channelFromParent();
      if (channel >= 0 && args.size() > 1 && args[1] == "holder") return childHolder(channel);
      if (channel >= 0 && args.size() > 1 && args[1] == "spread") return childSpread(channel);
      std::fprintf(stderr, "usage: lesson26-checkpoint --child holder|spread, with WORKBOOK_CHANNEL set\n");
      return wb::kExitUsage;
    }
    const bool csv = args.size() == 2 && args[0] == "--csv";
    if (!csv && !args.empty()) {
      std::fprintf(stderr, "usage: %s [--csv lesson26-figure.csv]\n", argv[0]);
      return wb::kExitUsage;
    }
    wb::checkEnvironment({{"CUDA_LAUNCH_BLOCKING", wb::Under::Controls,
                           "its children run without it: the kernel of step 3 must leave the child's stream busy"}});
    // The images are checked before any child starts: a damaged one stops the lesson here, once.
    for (const char* image : {"checkpoint.fatbin", "streams.fatbin"}) wb::verifiedImagePath(image);
    wb::FigureTable table("bytes,way,GB/s");
#if CUDA_VERSION >= 12080
    {
      // The children start now, side by side with this process's own start-up.
      Child holder("holder");
      std::unique_ptr<Child> spread = CUDA_VERSION >= 13000 ? std::make_unique<Child>("spread") : nullptr;
      CU_CHECK(cuInit(0));
      int driver = 0;
      CU_CHECK(cuDriverGetVersion(&driver));
      // lessons/needs.tsv: 12.8 for any step (13.0 for step 6's gpuPairs, which its build decides).
      wb::expect(wb::meetsDriver(driver, wb::For::AnyStep),
                 "a driver with the checkpoint calls (CUDA 12.8 introduced them)", "driver " + std::to_string(driver));
      CUcontext primary = nullptr;
      CU_CHECK(cuDevicePrimaryCtxRetain(&primary, 0));
      CU_CHECK(cuCtxSetCurrent(primary));
      if (wb::underSanitizer()) {
        // On driver 580, compute-sanitizer answered every checkpoint call with CUDA_ERROR_NOT_SUPPORTED:
        // under it the sanitizer checks what the program does around them (the children, the memory).
        leaveOutEveryStep(" under compute-sanitizer: it answers the cuCheckpointProcess* calls with "
                          "CUDA_ERROR_NOT_SUPPORTED");
      } else {
        table = lesson(holder, spread.get());
      }
      CU_CHECK(cuCtxSetCurrent(nullptr));
      CU_CHECK(cuDevicePrimaryCtxRelease(0));
    }
#else
    CU_CHECK(cuInit(0));
    leaveOutEveryStep(": this program was built with CUDA " + std::to_string(CUDA_VERSION) +
                      ", whose cuda.h has no cuCheckpointProcess* (CUDA 12.8 introduced them)");
#endif
    return table.save(csv ? args[1] : "", kSteps);
  } catch (...) {
    return wb::reportFatal(std::current_exception());
  }
}
