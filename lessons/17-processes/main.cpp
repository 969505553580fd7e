// Lesson 17: processes: CUDA and fork, several processes on one GPU, sharing memory and events.
//
// What you learn: a CUDA context belongs to one process. A child made with fork() after cuInit gets
// a copy of the parent's memory, and what CUDA does in it is undefined: the reference says nothing
// of fork, NVIDIA's guidelines call any CUDA use between fork and exec undefined, and the child here
// shows what this driver answered, which the program prints and does not claim. The fix: start
// workers as fresh programs (fork and exec, as lesson 10's supervisor does); forking before anything
// has initialised CUDA is what many servers do, and is still a use between fork and exec. Several
// processes share one GPU, each with a context of its own, where the device's compute mode allows
// it: the device's free memory falls when another process allocates, and, on a device with compute
// preemption or under MPS, a kernel that waits forever in one process does not stop another's.
// Memory crosses processes two ways: the legacy cuIpcGetMemHandle / cuIpcOpenMemHandle (memory from
// cuMemAlloc only), where the exporter must outlive every importer's use, and a POSIX file
// descriptor from cuMemExportToShareableHandle, passed over a Unix socket, where the memory lives
// as long as any process holds a handle, a mapping or a descriptor of it. How an interprocess event
// orders a consumer's stream after a producer's work is the optional page's program, deeper.cpp
// (step 5). Every child has a time limit; the parent and its children talk over Unix sockets with
// deadlines (common/processes.hpp).
//
// APIs: cuInit, cuDevicePrimaryCtxRetain, cuCtxGetCurrent, cuMemAlloc, cuMemGetInfo, cuDeviceGetAttribute,
//       cuIpcGetMemHandle, cuIpcOpenMemHandle, cuIpcCloseMemHandle, cuMemCreate,
//       cuMemExportToShareableHandle, cuMemImportFromShareableHandle, cuMemMap, cuMemSetAccess,
//       cuMemUnmap, cuMemRelease
// Run:  ctest -R lesson17   (or build/lessons/lesson17-processes)
#include "channel.hpp"
#include "gate.hpp"
#include "process.hpp"
#include "processes.hpp"
#include "workbook.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <future>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

using Kernels = wb::StreamKernels;  // gate, stamp and burn (common/gate.hpp)

constexpr unsigned kChildSeconds = 20;  // every child's time limit: nothing here waits longer
constexpr unsigned kForkedSeconds = 3;  // the time limit of a process forked without exec
constexpr double kGateSeconds = 5;      // a gate kernel in a child gives up after this
constexpr size_t kNeighbourBytes = size_t{2} << 30;
constexpr unsigned kMark = 0x600DF00Du;   // what an importer writes into shared memory

// Parent and children talk through common/processes.hpp (wb::Note, wb::talk): every wait has a
// deadline, and every child's time limit is kChildSeconds.
using wb::firstWord;
using wb::Mapped;
using wb::note;
using wb::Note;
using wb::pattern;
using wb::said;
using wb::wordsOfPattern;
using wb::talk::await;
using wb::talk::Primary;
using wb::talk::Quit;
using wb::talk::tell;

std::string howItEnded(const wb::ProcessEnd& end, unsigned limit = kChildSeconds) {
  return wb::talk::howItEnded(end, limit);
}

Note hear(wb::ChildChannel& child, const char* who, const char* what, int* fd = nullptr) {
  return wb::talk::hear(child, who, what, kChildSeconds, fd);
}

size_t freeMemory() {
  size_t free = 0, total = 0;
  CU_CHECK(cuMemGetInfo(&free, &total));
  return free;
}

std::string moved(size_t before, size_t after) {
  if (after == before) return "did not change";
  return after < before ? "fell by " + wb::bytes(before - after) : "rose by " + wb::bytes(after - before);
}

// The name of a CUresult from the toolkit's table: no driver call (a forked child's codes are named
// by its parent).
std::string nameOf(int rc) {
  const char* name = wb::headerErrorName(static_cast<CUresult>(rc));
  return name ? name : "unknown CUresult";
}

// ---- Step 1: fork ---------------------------------------------------------------------------------

// What a process forked without exec reports: one record per call.
struct CallRecord {
  char call[64];
  int result;
  char detail[40];
};

// In the forked process: writes one record at once, with write(2). Nothing here allocates: other
// threads of the parent (the driver's) may have held locks at the fork, and only this thread was copied.
void record(int out, const char* call, CUresult rc, const char* detail = "") {
  CallRecord r{};
  std::snprintf(r.call, sizeof r.call, "%s", call);
  std::snprintf(r.detail, sizeof r.detail, "%s", detail);
  r.result = static_cast<int>(rc);
  if (write(out, &r, sizeof r) < 0) _exit(3);
}

struct Forked {
  std::vector<CallRecord> records;
  wb::ProcessEnd end;  // its signal or exit code; output unused (it writes records)
};

//! [fork-and-record]
// fork() without exec: the child runs body under an alarm of its own (fork does not pass one on) and
// ends with _exit (no destructor, no atexit handler); its records come back through a pipe.
template <class Body>
Forked forkAndRecord(Body body) {
  std::fflush(stdout);  // nothing buffered here is written twice
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    alarm(kForkedSeconds);
    close(fds[0]);
    body(fds[1]);
    _exit(0);
  }
  close(fds[1]);
  Forked f;
  CallRecord r{};
  for (ssize_t got; (got = read(fds[0], &r, sizeof r)) != 0;) {
    if (got < 0 && errno == EINTR) continue;
    if (got != static_cast<ssize_t>(sizeof r)) break;
    f.records.push_back(r);
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  f.end.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  f.end.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  f.end.timedOut = f.end.signal == SIGALRM;
  return f;
}
//! [fork-and-record]

void printForked(const Forked& f) {
  std::printf("  the forked child:\n");
  for (const CallRecord& r : f.records)
    std::printf("    %s: %s (%d)%s%s\n", r.call, nameOf(r.result).c_str(), r.result, r.detail[0] ? ", " : "", r.detail);
  std::printf("    (the forked child: %s)\n", howItEnded(f.end, kForkedSeconds).c_str());
}

//! [fork-after-init]
// In a child: CUDA initialised, the primary context current, memory allocated, and then fork(). The
// forked process tries what it inherited, one call at a time.
int childForkAfterInit() {
  Primary p;
  CUdeviceptr buffer = 0;
  CU_CHECK(cuMemAlloc(&buffer, 1u << 20));
  std::printf("  cuInit, the primary context current, 1 MiB allocated; then fork()\n");
  const Forked forked = forkAndRecord([&](int out) {
    CUcontext current = nullptr;
    const CUresult got = cuCtxGetCurrent(&current);
    record(out, "cuCtxGetCurrent", got,
           got != CUDA_SUCCESS ? ""
           : current == p.ctx  ? "the parent's context"
           : current           ? "another context"
                               : "none");
    CUdeviceptr more = 0;
    record(out, "cuMemAlloc in the parent's context", cuMemAlloc(&more, 4096));
    record(out, "cuInit(0) again", cuInit(0));
    CUcontext fresh = nullptr;
    record(out, "cuDevicePrimaryCtxRetain", cuDevicePrimaryCtxRetain(&fresh, p.dev));
  });
  printForked(forked);
  //! [fork-after-init]
  //! [spawn]
  // The fix, from this same process, initialised and with its context current: a fresh program,
  // started with fork and exec (wb::runProcess), which initialises CUDA for itself.
  const wb::ProcessEnd fresh = wb::runProcess({wb::selfPath(), "--child", "worker"}, {"CUDA_LAUNCH_BLOCKING"},
                                              kChildSeconds);
  std::printf("  then a fresh program, by fork and exec from this process: %s", fresh.output.c_str());
  std::printf("    (the fresh program: %s)\n", howItEnded(fresh).c_str());
  CU_CHECK(cuMemFree(buffer));
  return fresh.code == 0 && !fresh.signal ? wb::kExitOk : wb::kExitContradicted;
}

// The fresh program: a process of its own from main() on, so CUDA starts afresh.
int childWorker() {
  Primary p;
  CUdeviceptr word = 0;
  CU_CHECK(cuMemAlloc(&word, sizeof(unsigned)));
  CU_CHECK(cuMemsetD32(word, kMark, 1));
  const unsigned back = firstWord(word);
  CU_CHECK(cuMemFree(word));
  std::printf("cuInit, a context, 0x%X written on the GPU and read back as 0x%X\n", kMark, back);
  return back == kMark ? wb::kExitOk : wb::kExitContradicted;
}
//! [spawn]

//! [fork-before-init]
// In a child that has made no CUDA call: fork() first, and the forked process initialises CUDA.
int childForkBeforeInit() {
  std::printf("  no CUDA call in this process yet; fork()\n");
  const Forked forked = forkAndRecord([](int out) {
    record(out, "cuInit(0)", cuInit(0));
    CUdevice dev = 0;
    record(out, "cuDeviceGet", cuDeviceGet(&dev, 0));
    CUcontext ctx = nullptr;
    record(out, "cuDevicePrimaryCtxRetain", cuDevicePrimaryCtxRetain(&ctx, dev));
    record(out, "cuCtxSetCurrent", cuCtxSetCurrent(ctx));
    CUdeviceptr word = 0;
    record(out, "cuMemAlloc", cuMemAlloc(&word, sizeof(unsigned)));
    record(out, "cuMemsetD32", cuMemsetD32(word, kMark, 1));
    unsigned back = 0;
    const CUresult copied = cuMemcpyDtoH(&back, word, sizeof back);
    char detail[40];
    std::snprintf(detail, sizeof detail, "read back 0x%X", back);
    record(out, "cuMemcpyDtoH", copied, detail);
    cuMemFree(word);
    cuDevicePrimaryCtxRelease(dev);
  });
  printForked(forked);
  return wb::kExitOk;
}
//! [fork-before-init]

// ---- The children that talk to the parent -------------------------------------------------------

//! [children]
// The variables a child runs without, whatever the user's shell sets (bare names are removed).
const std::vector<std::string> kControlled = {"CUDA_LAUNCH_BLOCKING"};

std::vector<std::string> childArgs(const char* role) { return {wb::selfPath(), "--child", role}; }

// Every child of this program (deeper.cpp starts step 5's), started at once so that their start-ups
// overlap: the two that fork (step 1) run to their end by themselves; the others initialise, say
// "ready", and wait for the parent's word at their step.
struct Children {
  std::future<wb::ProcessEnd> afterInit = std::async(std::launch::async, [] {
    return wb::runProcess(childArgs("fork-after-init"), kControlled, kChildSeconds);
  });
  std::future<wb::ProcessEnd> beforeInit = std::async(std::launch::async, [] {
    return wb::runProcess(childArgs("fork-before-init"), kControlled, kChildSeconds);
  });
  wb::ChildChannel neighbour{childArgs("neighbour"), kControlled, kChildSeconds};
  wb::ChildChannel importer{childArgs("importer"), kControlled, kChildSeconds};
  wb::ChildChannel exporter{childArgs("exporter"), kControlled, kChildSeconds};
  // A child still waiting for its word (the lesson stopped early) is told to end now, not at its
  // deadline; one that has ended finds nothing of it.
  ~Children() {
    for (wb::ChildChannel* c : {&neighbour, &importer, &exporter}) c->send(note("quit"));
  }
};
//! [children]

//! [fork-step]
// What the forked processes answered is undefined behaviour (guideline rule 1.6): printed, never
// claimed. What is claimed: the child that forked after cuInit ended by itself, having started a
// fresh program (fork and exec) that initialised CUDA and read back what it wrote (its exit code
// says so), and the child that forked before any CUDA call ended by itself.
void forkStep(Children& kids) {
  std::printf("a child that forks after cuInit:\n");
  const wb::ProcessEnd after = kids.afterInit.get();
  std::printf("%s  (the child: %s)\n", after.output.c_str(), howItEnded(after).c_str());
  std::printf(
      "  what the forked process got is undefined: the lines above are this driver's answer, not a rule\n");
  wb::expect(after.code == 0 && !after.signal,
             "the fresh program, started from a process that had initialised CUDA, "
             "initialising CUDA and reading back what it wrote",
             howItEnded(after));
  std::printf("a child that forks before any CUDA call:\n");
  const wb::ProcessEnd before = kids.beforeInit.get();
  std::printf("%s  (the child: %s)\n", before.output.c_str(), howItEnded(before).c_str());
  wb::expect(before.code == 0 && !before.signal, "the child that forks before cuInit ending by itself",
             howItEnded(before));
}
//! [fork-step]

void awaitReady(Children& kids) {
  hear(kids.neighbour, "the neighbour", "ready");
  hear(kids.importer, "the importer", "ready");
  hear(kids.exporter, "the exporter", "ready");
}

// ---- Step 2: several processes --------------------------------------------------------------------

//! [neighbour]
// In a child, "the neighbour": a process with a context of its own. On the parent's word it
// allocates and starts its gate; once the gate runs, it tells the parent. Told to go on, it reads
// whether its gate still waited, opens it, and frees its memory.
int childNeighbour(int parent) {
  Primary p;
  CUlibrary library = nullptr;
  CU_CHECK(cuLibraryLoadFromFile(&library, wb::verifiedImagePath("processes.fatbin").c_str(), nullptr,
                                 nullptr, 0, nullptr, nullptr, 0));
  CUkernel kernel = nullptr;
  CU_CHECK(cuLibraryGetKernel(&kernel, library, "announced_gate"));
  CUstream stream = nullptr;
  CU_CHECK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  tell(parent, note("ready"));
  const Note order = await(parent, "allocate");
  CUdeviceptr big = 0;
  CU_CHECK(cuMemAlloc(&big, static_cast<size_t>(order.v[0])));
  unsigned seen = 0;
  {
    wb::AnnouncedGate gate(reinterpret_cast<CUfunction>(kernel), stream, kGateSeconds);
    tell(parent, note("holding", order.v[0], getpid()));
    await(parent, "release");
    seen = gate.outcome();  // 0: it still waited when the parent's kernel had ended
  }
  CU_CHECK(cuMemFree(big));
  tell(parent, note("released", seen));
  CU_CHECK(cuStreamDestroy(stream));
  CU_CHECK(cuLibraryUnload(library));
  return wb::kExitOk;
}
//! [neighbour]

//! [several]
// This process and the neighbour on one device: the free memory this process sees while the
// neighbour allocates, and a kernel of this process's own while the neighbour's kernel waits.
void severalProcesses(const Kernels& k, Children& kids, const wb::Sharing& sharing) {
  std::printf(
      "device 0: %s; MPS %s; compute preemption %s\n", wb::computeModeName(sharing.mode),
      sharing.mps ? "enabled: this process and the neighbour are clients of one MPS server" : "not enabled",
      sharing.preemption ? "supported" : "NOT supported");
  const size_t before = freeMemory();
  kids.neighbour.send(note("allocate", static_cast<int64_t>(kNeighbourBytes)));
  const Note holding = hear(kids.neighbour, "the neighbour", "holding");
  const size_t during = freeMemory();
  wb::PinnedWords words(2);  // [0] the stamp counter, [1] the stamp
  CUstream stream = nullptr;
  CU_CHECK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  CUdeviceptr counter = words.device(0), slot = words.device(1);
  void* args[] = {&counter, &slot};
  CU_CHECK(cuLaunchKernel(k.stamp, 1, 1, 1, 1, 1, 1, 0, stream, args, nullptr));
  CU_CHECK(cuStreamSynchronize(stream));  // the neighbour's kernel is still waiting, unless it gave up
  CU_CHECK(cuStreamDestroy(stream));
  const unsigned stamp = words.read(1);
  kids.neighbour.send(note("release"));
  const Note released = hear(kids.neighbour, "the neighbour", "released");
  const size_t after = freeMemory();
  //! [several]
  //! [several-report]
  std::printf(
      "the neighbour (pid %llu), a process with its own context: allocated %s and launched a kernel "
      "that waits\n  free memory this process sees: %s\n",
      static_cast<unsigned long long>(holding.v[1]), wb::bytes(static_cast<size_t>(holding.v[0])).c_str(),
      moved(before, during).c_str());
  std::printf("this process's own kernel, launched meanwhile: %s\n",
              stamp == 1 ? "ran to its end" : "did NOT run");
  const bool stillWaiting = released.v[0] == wb::Gate::Waiting;
  std::printf("the neighbour's kernel, when this process's had ended: %s; then it freed its memory\n"
              "  free memory this process sees: %s\n",
              stillWaiting ? "still waiting" : "had given up at its deadline", moved(during, after).c_str());
  wb::expect(before >= during + kNeighbourBytes * 3 / 4 && after >= during + kNeighbourBytes * 3 / 4,
             "the neighbour's allocation and its free in the free memory this process sees",
             "free memory " + moved(before, during) + ", then " + moved(during, after));
  // Without compute preemption and without MPS nothing says that a kernel that never ends can be
  // switched out for another context's: there the program shows what happened and claims nothing.
  if (sharing.preemption || sharing.mps)
    wb::expect(
        stamp == 1 && stillWaiting, "this process's kernel ending while the neighbour's kernel waited",
        stamp == 1 ? "the neighbour's kernel had given up first" : "this process's kernel did not run");
  else
    std::printf("without compute preemption or MPS the lesson claims nothing of the two kernels' order\n");
  const wb::ProcessEnd& end = kids.neighbour.end();
  wb::expect(end.code == 0 && !end.signal, "the neighbour ending by itself", howItEnded(end));
}
//! [several-report]

// ---- Step 3: legacy IPC ---------------------------------------------------------------------------

//! [legacy-import]
// In a child, "the importer": it opens the parent's handle, checks the parent's pattern, writes a
// mark, and closes the mapping before it says so: the parent frees only after that.
int childImporter(int parent) {
  Primary p;
  tell(parent, note("ready"));
  const Note offer = await(parent, "open");
  CUipcMemHandle handle{};
  std::memcpy(&handle, offer.mem, sizeof handle);
  CUdeviceptr shared = 0;
  CU_CHECK(cuIpcOpenMemHandle(&shared, handle, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS));
  const size_t right =
      wordsOfPattern(shared, static_cast<size_t>(offer.v[0]) / sizeof(uint32_t), static_cast<uint32_t>(offer.v[1]));
  CU_CHECK(cuMemsetD32(shared, kMark, 1));
  CU_CHECK(cuCtxSynchronize());
  CU_CHECK(cuIpcCloseMemHandle(shared));
  //! [legacy-import]
  //! [legacy-own]
  // Then a handle of its own allocation, opened in the process that exported it.
  CUdeviceptr own = 0, again = 0;
  CU_CHECK(cuMemAlloc(&own, 1u << 20));
  CUipcMemHandle mine{};
  CU_CHECK(cuIpcGetMemHandle(&mine, own));
  const CUresult reopened = cuIpcOpenMemHandle(&again, mine, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
  if (reopened == CUDA_SUCCESS) cuIpcCloseMemHandle(again);  // outside the reference's contract either way:
  cuMemFree(own);                                            // what these return is not this step's claim
  tell(parent, note("closed", static_cast<int64_t>(right), reopened));
  return wb::kExitOk;
}
//! [legacy-own]

//! [legacy-export]
// The exporter's side: memory from cuMemAlloc, a pattern in it, and its IPC handle: 64 opaque bytes
// that may be copied to another process by any means (here, in a message over the socket).
void legacyIpc(Children& kids, CUdevice dev) {
  int ipc = 0;
  CU_CHECK(cuDeviceGetAttribute(&ipc, CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED, dev));
  std::printf("CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED: %d\n", ipc);
  const size_t bytes = 4u << 20, words = bytes / sizeof(uint32_t);
  const uint32_t seed = 0x1E6AC7u;
  CUdeviceptr buffer = 0;
  CU_CHECK(cuMemAlloc(&buffer, bytes));
  CU_CHECK(cuMemcpyHtoD(buffer, pattern(seed, words).data(), bytes));
  // From pageable memory the copy may return before the bytes land, and the importer's reads are
  // ordered after nothing in this process: the host waits for the context before the handle goes out.
  CU_CHECK(cuCtxSynchronize());
  CUipcMemHandle handle{};
  CU_CHECK(cuIpcGetMemHandle(&handle, buffer));
  Note offer = note("open", bytes, seed);
  std::memcpy(offer.mem, &handle, sizeof handle);
  kids.importer.send(offer);
  const Note closed = hear(kids.importer, "the importer", "closed");
  const wb::ProcessEnd& end = kids.importer.end();
  const unsigned first = firstWord(buffer);
  CU_CHECK(cuMemFree(buffer));  // every importer has closed its mapping: now the exporter may free
  //! [legacy-export]
  std::printf("this process: cuMemAlloc of %s, a pattern written, cuIpcGetMemHandle: %zu bytes sent as data\n",
              wb::bytes(bytes).c_str(), sizeof handle);
  std::printf("the importer: cuIpcOpenMemHandle, %llu of %zu words as this process wrote them, 0x%X written into "
              "the first, cuIpcCloseMemHandle; %s\n",
              static_cast<unsigned long long>(closed.v[0]), words, kMark, howItEnded(end).c_str());
  std::printf("the importer, opening a handle of its own allocation in its own process: %s (the reference leaves "
              "this open: shown, not claimed)\n", wb::errorName(static_cast<CUresult>(closed.v[1])).c_str());
  std::printf("back here: the first word is 0x%X; the importer had closed, so cuMemFree came last\n", first);
  wb::expect(ipc == 1 && static_cast<size_t>(closed.v[0]) == words && first == kMark && end.code == 0,
             "another process opening the memory, reading this process's data and writing into it",
             "IPC support " + std::to_string(ipc) + ", " + std::to_string(closed.v[0]) + " words right, first word " +
                 wb::hex(first) + ", " + howItEnded(end));
}

// ---- Step 4: sharing by file descriptor ---------------------------------------------------------

//! [exporter]
// In a child, "the exporter": creates and fills the memory, sends the descriptor, and once the parent
// has mapped it, gives back everything it holds (mapping, addresses, descriptor) and exits.
int childExporter(int parent) {
  Primary p;
  tell(parent, note("ready"));
  const Note order = await(parent, "export");
  const wb::Shared s = wb::createShared(p.dev, static_cast<size_t>(order.v[0]));
  const uint32_t seed = 0xF11E5u;
  CU_CHECK(cuMemcpyHtoD(s.mapped.ptr, pattern(seed, s.mapped.size / 4).data(), s.mapped.size));
  CU_CHECK(cuCtxSynchronize());  // landed before the descriptor goes out (pageable: as in step 3)
  tell(parent, note("exported", s.mapped.size, seed), s.fd);
  await(parent, "mapped");
  wb::unmap(s.mapped);
  close(s.fd);
  tell(parent, note("released"));
  return wb::kExitOk;
}
//! [exporter]

//! [fd-protocol]
// This process imports what the exporter sent, and holds it after the exporter has exited.
void fdSharing(Children& kids, CUdevice dev) {
  kids.exporter.send(note("export", 64u << 20));
  int fd = -1;
  const Note offer = hear(kids.exporter, "the exporter", "exported", &fd);
  const Mapped m = wb::importShared(fd, static_cast<size_t>(offer.v[0]), dev);
  const size_t words = m.size / sizeof(uint32_t);
  const size_t whileAlive = wordsOfPattern(m.ptr, words, static_cast<uint32_t>(offer.v[1]));
  kids.exporter.send(note("mapped"));
  hear(kids.exporter, "the exporter", "released");
  const wb::ProcessEnd& end = kids.exporter.end();
  const size_t held = freeMemory();
  const size_t afterExit = wordsOfPattern(m.ptr, words, static_cast<uint32_t>(offer.v[1]));
  CU_CHECK(cuMemsetD32(m.ptr, kMark, 1));
  const unsigned first = firstWord(m.ptr);
  wb::unmap(m);  // the last reference to the memory, in any process
  const size_t released = freeMemory();
  //! [fd-protocol]
  //! [fd-report]
  std::printf(
      "the exporter: cuMemCreate of %s for POSIX file descriptors, filled, exported, the descriptor sent\n",
      wb::bytes(static_cast<size_t>(offer.v[0])).c_str());
  std::printf("this process: imported and mapped at %s: %zu of %zu words as the exporter wrote them\n",
              wb::hex(m.ptr).c_str(), whileAlive, words);
  std::printf("the exporter: unmapped, closed its descriptor (its handle was released at once); %s\n",
              howItEnded(end).c_str());
  std::printf(
      "after the exporter exited: %zu of %zu words still there; 0x%X written into the first, read back "
      "0x%X\n",
      afterExit, words, kMark, first);
  std::printf("this process's cuMemUnmap, the last reference: free memory %s\n",
              moved(held, released).c_str());
  wb::expect(whileAlive == words && afterExit == words && first == kMark && end.code == 0,
             "the memory intact and usable after the exporter exited",
             std::to_string(afterExit) + " words right");
  wb::expect(released >= held + static_cast<size_t>(offer.v[0]) / 2, "the memory given back by the last unmap",
             "free memory " + moved(held, released));
}
//! [fd-report]

int childMain(const std::vector<std::string>& args) {
  const std::string what = args.empty() ? "" : args[0];
  const int channel = wb::channelFromParent();
  try {
    if (what == "fork-after-init") return childForkAfterInit();
    if (what == "fork-before-init") return childForkBeforeInit();
    if (what == "worker") return childWorker();
    if (channel >= 0 && what == "neighbour") return childNeighbour(channel);
    if (channel >= 0 && what == "importer") return childImporter(channel);
    if (channel >= 0 && what == "exporter") return childExporter(channel);
  } catch (const Quit&) {
    return wb::kExitOk;
  }
  std::fprintf(stderr, "usage: lesson17-processes --child fork-after-init|fork-before-init|worker, or "
                       "neighbour|importer|exporter with WORKBOOK_CHANNEL set\n");
  return wb::kExitUsage;
}

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  try {
    if (!args.empty() && args[0] == "--child") return childMain({args.begin() + 1, args.end()});
    if (!args.empty()) {
      std::fprintf(stderr, "usage: %s\n", argv[0]);
      return wb::kExitUsage;
    }
    wb::checkEnvironment({
        {"CUDA_LAUNCH_BLOCKING", wb::Under::Controls,
         "its children run without it: their gate kernels must leave their streams busy"},
    });
    // The images are checked before any child starts: a damaged one stops the lesson here, once.
    const std::string streams = wb::verifiedImagePath("streams.fatbin");
    wb::verifiedImagePath("processes.fatbin");  // the neighbour's
    // Under compute-sanitizer (the sanitize target sets WORKBOOK_UNDER_SANITIZER) step 2, whose work
    // must run beside another process's waiting kernel, is left out and says so (deeper.cpp's step 5 too).
    const bool sanitized = wb::underSanitizer();
    const char* leftOut =
        "left out under compute-sanitizer: this process's work must run beside another's waiting kernel\n";
    CUlibrary library = nullptr;
    {
      Children kids;  // all of them start now, side by side with this process's own start-up
      CU_CHECK(cuInit(0));
      CUdevice dev0 = 0;
      CU_CHECK(cuDeviceGet(&dev0, 0));
      const wb::Sharing sharing = wb::expectSeveralProcesses(dev0);  // or stops, naming the mode
      const std::string noFd = wb::fdSharingMissing(dev0);
      Primary primary;
      CU_CHECK(cuLibraryLoadFromFile(&library, streams.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0));
      const Kernels k = Kernels::load(library);
      wb::step(1, "CUDA and fork");
      forkStep(kids);
      awaitReady(kids);
      wb::step(2, "Several processes on one GPU");
      if (sanitized) {
        std::printf("%s", leftOut);
        kids.neighbour.send(note("quit"));
      } else {
        severalProcesses(k, kids, sharing);
      }
      wb::step(3, "Legacy IPC: cuIpcGetMemHandle");
      legacyIpc(kids, primary.dev);
      wb::step(4, "Sharing by file descriptor: who holds the memory");
      if (!noFd.empty()) {
        std::printf("skipped: %s\n", noFd.c_str());
        kids.exporter.send(note("quit"));
      } else {
        fdSharing(kids, primary.dev);
      }
      CU_CHECK(cuLibraryUnload(library));
    }
    return wb::kExitOk;
  } catch (...) {
    return wb::reportFatal(std::current_exception());
  }
}
