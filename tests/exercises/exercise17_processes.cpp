// The checks of lesson 17's exercises (lessons/17-processes/exercises.cpp). The other process of
// each exercise is this check again, running one child test case with a time limit, and every wait
// for its messages has a deadline; a check that stops early tells it to end. What a function leaves
// behind is read from the ledger (tests/exercises/ledger.hpp) and from /proc/self/fd, and its
// failure paths are provoked through the ledger's FailCall. share-server reads the device's free
// memory, so it runs with the GPU to itself. Each case's name begins with the requirements it verifies.
#include "check.hpp"
#include "lesson17_processes.hpp"
#include "channel.hpp"
#include "gate.hpp"
#include "scratch.hpp"
#include "17-processes/exercises.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

namespace {

constexpr unsigned kChildSeconds = 60;

using l17::await;
using l17::granularity;
using l17::kFresh;
using l17::kGateSeconds;
using l17::kReplySeconds;
using l17::kStale;
using l17::kUnread;
using l17::Lab;
using l17::note;
using l17::Note;
using l17::parentChannel;
using l17::patternAt;
using l17::PinnedBuffer;
using l17::tell;

struct Child : l17::Child {
  explicit Child(const char* testCase, const std::vector<std::string>& env = {})
      : l17::Child(testCase, withChildSettings(env), kChildSeconds) {}
  static std::vector<std::string> withChildSettings(std::vector<std::string> env) {
    env.push_back("WORKBOOK_CHILD=1");
    env.push_back("WORKBOOK_EXERCISE_RESULTS");
    return env;
  }
};

using wbt::Stream;

// How many descriptors this process has open (a directory stream reading /proc/self/fd is one
// more, the same in every count).
size_t openDescriptors() {
  size_t n = 0;
  if (DIR* d = opendir("/proc/self/fd")) {
    while (const dirent* e = readdir(d)) n += e->d_name[0] != '.';
    closedir(d);
  }
  return n;
}

// Checks that need a second process with a context on the device run only where the device takes
// several: under CU_COMPUTEMODE_EXCLUSIVE_PROCESS (which MPS hosts often set) the second context is
// refused, and a correct solution would fail.
void needSharedDevice(int ordinal) {
  CU_CHECK(cuInit(0));
  const int mode = wbt::attribute(wbt::device(ordinal), CU_DEVICE_ATTRIBUTE_COMPUTE_MODE);
  if (mode != CU_COMPUTEMODE_DEFAULT)
    throw wbx::Skipped("device " + std::to_string(ordinal) + " is in compute mode " + std::to_string(mode) +
                       ", not CU_COMPUTEMODE_DEFAULT: it takes no context of a second process");
}

// Runs f, which must throw: true when it threw anything but wb::NotDone (which goes on).
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

// Runs f, which must throw std::runtime_error (wb::DriverError is one): true when it did.
template <class F>
bool threwRuntimeError(F&& f) {
  try {
    f();
  } catch (const wb::NotDone&) {
    throw;
  } catch (const std::runtime_error&) {
    return true;
  } catch (const std::exception&) {
  }
  return false;
}

// ---- fork-pool ----------------------------------------------------------------------------------

constexpr const char* kPoolCase = "child: runWorkers in a process that has called cuInit";
constexpr const char* kWorkerCase = "child: a worker of the pool";
constexpr unsigned kGpuWorkers = 2, kEndWorkers = 6;
constexpr unsigned kTogetherSeconds = 3;
constexpr size_t kBigOutput = 200000;  // more than a pipe holds (64 KiB on Linux)
const char* const kWorkerLine = "a line from worker 4\n";

// A count that processes share through a file each maps, with a process-shared mutex and condition:
// how workers learn that others have started (or finished) without a sleep.
struct Tally {
  pthread_mutex_t mutex;
  pthread_cond_t changed;
  int count;
};

void makeTally(const std::string& path) {
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  REQUIRE(fd >= 0);
  REQUIRE(ftruncate(fd, sizeof(Tally)) == 0);
  void* at = mmap(nullptr, sizeof(Tally), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  REQUIRE(at != MAP_FAILED);
  Tally* t = static_cast<Tally*>(at);
  pthread_mutexattr_t ma;
  pthread_mutexattr_init(&ma);
  pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
  pthread_mutex_init(&t->mutex, &ma);
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setpshared(&ca, PTHREAD_PROCESS_SHARED);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&t->changed, &ca);
  t->count = 0;
  munmap(at, sizeof(Tally));
}

// In a worker: adds `add` to the tally at path, then waits until it reaches `atLeast` or `seconds`
// have passed; whether it reached it.
bool tally(const std::string& path, int add, int atLeast, unsigned seconds) {
  const int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return false;
  void* at = mmap(nullptr, sizeof(Tally), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (at == MAP_FAILED) return false;
  Tally* t = static_cast<Tally*>(at);
  timespec deadline{};
  clock_gettime(CLOCK_MONOTONIC, &deadline);
  deadline.tv_sec += seconds;
  pthread_mutex_lock(&t->mutex);
  t->count += add;
  pthread_cond_broadcast(&t->changed);
  while (t->count < atLeast && pthread_cond_timedwait(&t->changed, &t->mutex, &deadline) != ETIMEDOUT) {
  }
  const bool reached = t->count >= atLeast;
  pthread_mutex_unlock(&t->mutex);
  munmap(at, sizeof(Tally));
  return reached;
}

// This process's arguments, from /proc/self/cmdline (the doctest filter and the pool's additions).
std::vector<std::string> ownArguments() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  const std::string all{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  std::vector<std::string> args;
  for (size_t from = 0; from < all.size();) {
    const size_t to = all.find('\0', from);
    args.push_back(all.substr(from, to - from));
    if (to == std::string::npos) break;
    from = to + 1;
  }
  return args;
}

// Pipe ends this process holds beyond standard input, output and error.
int pipesBeyondStandard() {
  int pipes = 0;
  if (DIR* d = opendir("/proc/self/fd")) {
    while (const dirent* e = readdir(d)) {
      const int fd = std::atoi(e->d_name);
      char target[256] = {};
      const std::string link = std::string("/proc/self/fd/") + e->d_name;
      if (e->d_name[0] != '.' && fd > 2 && readlink(link.c_str(), target, sizeof target - 1) > 0)
        pipes += std::strncmp(target, "pipe:", 5) == 0;
    }
    closedir(d);
  }
  return pipes;
}

// Makes every descriptor this process has beyond 0, 1 and 2 (the driver's among them)
// close-on-exec: a worker then inherits only what the pool gives it.
void closeOnExecAll() {
  std::vector<int> fds;
  if (DIR* d = opendir("/proc/self/fd")) {
    const int own = dirfd(d);
    while (const dirent* e = readdir(d))
      if (e->d_name[0] != '.' && std::atoi(e->d_name) > 2 && std::atoi(e->d_name) != own) fds.push_back(std::atoi(e->d_name));
    closedir(d);
  }
  for (int fd : fds) {
    const int flags = fcntl(fd, F_GETFD);
    if (flags >= 0) fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
  }
}

// A worker's GPU job: CUDA from cuInit on, in its own process; 1000 + index through device memory.
unsigned roundTrip(unsigned index) {
  CU_CHECK(cuInit(0));
  wbt::RetainedPrimary primary(wbt::device(0));
  wbt::Pushed current(primary.get());
  wbt::DeviceBuffer word(sizeof(unsigned));
  CU_CHECK(cuMemsetD32(word.get(), 1000 + index, 1));
  unsigned back = 0;
  CU_CHECK(cuMemcpyDtoH(&back, word.get(), sizeof back));
  return back;
}

// What a worker of the first run prints when all went well.
std::string gpuLine(unsigned index, long pid) {
  return "worker " + std::to_string(index) + " in process " + std::to_string(pid) + " read " +
         std::to_string(1000 + index) + "\n";
}

// A worker of the second run that may be left waiting ends with the process that started it, so a
// pool that never ends it leaves nothing behind once the check has ended that process.
void endWithParent() {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() == 1) _exit(0);
}

// ---- share-server ---------------------------------------------------------------------------------

// The primary context of device `ordinal`, current for the scope.
struct OnDevice {
  CUdevice dev;
  wbt::RetainedPrimary primary;
  wbt::Pushed current;
  explicit OnDevice(int ordinal)
      : dev(wbt::deviceKeepingPrimary(ordinal)), primary(dev), current(primary.get()) {}
};

int deviceCount() {
  CU_CHECK(cuInit(0));
  int count = 0;
  CU_CHECK(cuDeviceGetCount(&count));
  return count;
}

// One export of shareable memory, given back at once: whatever the driver opens for the first
// export of a process stays open, so the descriptor counts below compare like with like.
void exportOnce(CUdevice dev) {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = dev;
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  CUmemGenericAllocationHandle handle = 0;
  CU_CHECK(cuMemCreate(&handle, granularity(dev), &prop, 0));
  int fd = -1;
  const CUresult exported = cuMemExportToShareableHandle(&fd, handle, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
  if (fd >= 0) close(fd);
  CU_CHECK(cuMemRelease(handle));
  CU_CHECK(exported);
}

}  // namespace

EXERCISE("fork-pool", "A pool of worker processes, each a fresh program that initialises CUDA itself",
         "Build every worker's argv (with std::to_string(i) appended) before forking. For each worker pipe2(fds, "
         "O_CLOEXEC) and fork(); in the child dup2(fds[1], 1), alarm(limitSeconds), execv, _exit(127); in this "
         "process close(fds[1]) at once. Then poll() all read ends and read whichever has data until each gives "
         "end of file (close it then), and only then waitpid each worker: WIFEXITED with exit code 0 keeps its "
         "output, anything else gives \"\". Reading one pipe to its end before the next lets a worker that fills "
         "its pipe run out of time.") {
  // A worker: this binary again, started by the learner's pool, its mode, tally file and index the
  // last three arguments.
  TEST_CASE(kWorkerCase * doctest::skip(!wbt::inChild())) {
    const std::vector<std::string> args = ownArguments();
    REQUIRE(args.size() >= 3);
    const std::string mode = args[args.size() - 3], place = args[args.size() - 2];
    const unsigned index = static_cast<unsigned>(std::stoul(args.back()));
    if (mode == "gpu") {
      const int pipes = pipesBeyondStandard();  // before anything here opens one
      const bool together = tally(place, 1, kGpuWorkers, kTogetherSeconds);
      const std::string who = "worker " + std::to_string(index) + " in process " + std::to_string(getpid());
      std::string line;
      if (!together)
        line = who + ": alone, the other worker had not started within " + std::to_string(kTogetherSeconds) + " s\n";
      else if (pipes)
        line = who + ": inherited " + std::to_string(pipes) + " pipe ends beside its output\n";
      else
        line = who + " read " + std::to_string(roundTrip(index)) + "\n";
      std::fputs(line.c_str(), stdout);
      return;
    }
    switch (index) {
      case 0:  // ends only once worker 3 has written everything, which needs its pipe read meanwhile
        endWithParent();
        if (tally(place, 0, 1, 60)) std::fputs("worker 3 finished first\n", stdout);
        return;
      case 1:
        std::fputs("exiting with code 3\n", stdout), std::fflush(stdout);
        _exit(3);
      case 2:
        std::fputs("about to be killed\n", stdout), std::fflush(stdout);
        raise(SIGKILL);
        return;
      case 3: {
        const std::string big(kBigOutput, 'x');
        std::fwrite(big.data(), 1, big.size(), stdout);
        std::fflush(stdout);
        tally(place, 1, 0, 0);
        return;
      }
      case 4:
        std::fputs(kWorkerLine, stdout);
        std::fputs("worker 4 on its standard error\n", stderr);
        return;
      default:  // never ends by itself
        endWithParent();
        for (;;) pause();
    }
  }

  // The pool's process: it has initialised CUDA, and starts this binary as its workers.
  TEST_CASE(kPoolCase * doctest::skip(!wbt::inChild())) {
    CU_CHECK(cuInit(0));
    closeOnExecAll();
    wb::ScratchDir dir;
    const std::string together = dir.path() + "/together", written = dir.path() + "/written";
    makeTally(together);
    makeTally(written);
    const std::string self = wb::selfPath(), filter = std::string("--test-case=") + kWorkerCase;
    const size_t descriptorsBefore = openDescriptors();

    const std::vector<std::string> gpu = ex17::runWorkers({self, filter, "--no-version", "gpu", together}, kGpuWorkers, 20);
    const std::vector<std::string> ends = ex17::runWorkers({self, filter, "--no-version", "ends", written}, kEndWorkers, 1);
    const pid_t left = waitpid(-1, nullptr, WNOHANG);
    const bool noChild = left < 0 && errno == ECHILD;
    const size_t descriptorsAfter = openDescriptors();

    REQUIRE(gpu.size() == kGpuWorkers);
    std::set<long> pids;
    for (unsigned i = 0; i < kGpuWorkers; ++i) {
      CAPTURE(i);
      const std::string line = gpu[i];
      CAPTURE(line);
      unsigned index = 0;
      long pid = 0;
      const bool read = std::sscanf(line.c_str(), "worker %u in process %ld", &index, &pid) == 2;
      CHECK_MESSAGE(line == gpuLine(i, read ? pid : 0),
                    "a CUDA worker's result is wrong: empty (it failed or was ended), another index's, or what the "
                    "worker said went wrong (alone: the workers did not run at once; inherited pipe ends: the pipes "
                    "are not close-on-exec)");
      CHECK_MESSAGE(pid != getpid(), "a result came from the pool's own process");
      pids.insert(pid);
    }
    CHECK_MESSAGE(pids.size() == kGpuWorkers, "two results came from the same process");

    REQUIRE(ends.size() == kEndWorkers);
    const std::string first = ends[0], fifth = ends[4];
    CAPTURE(first);
    CAPTURE(fifth);
    CHECK_MESSAGE(first == "worker 3 finished first\n",
                  "worker 0 waits until worker 3 has written its 200000 bytes: that never happened, so worker 3's "
                  "pipe was not read while worker 0 ran (one pipe after another, or waiting before reading)");
    CHECK_MESSAGE(ends[1].empty(), "the worker that exited with code 3 gave its output: only exit code 0 counts");
    CHECK_MESSAGE(ends[2].empty(), "the worker killed by a signal gave its output");
    CHECK_MESSAGE(ends[3] == std::string(kBigOutput, 'x'),
                  "the worker that wrote 200000 bytes lost its result: a worker that fills its pipe waits for "
                  "the pool to read it");
    CHECK_MESSAGE(fifth == kWorkerLine,
                  "worker 4's result is not exactly its standard output (its standard error is not part of it), "
                  "or is not in its index's place");
    CHECK_MESSAGE(ends[5].empty(), "the worker that never ends gave a result");
    CHECK_MESSAGE(noChild, "after runWorkers a worker is still running or was never waited for (a zombie)");
    CAPTURE(descriptorsBefore);
    CAPTURE(descriptorsAfter);
    CHECK_MESSAGE(descriptorsAfter == descriptorsBefore, "runWorkers left descriptors open (the pipes' read ends?)");
  }

  TEST_CASE("R1 R3 R4 R5 R6: CUDA workers started at once from a process that has called cuInit, and workers that fail, crash, hang and fill their pipes: every result right and in place, nothing left behind") {
    needSharedDevice(0);
    const wbx::ChildResult child = wbx::runInChild(kPoolCase, 40);
    const std::string output = child.output;
    CAPTURE(output);
    CHECK_MESSAGE(!child.timedOut, "the pool never returned: is every worker ended after limitSeconds, and every "
                                   "pipe's write end closed in the pool's process?");
    CHECK_MESSAGE((!child.crashed && child.code == 0), "the pool's checks failed in its process (its output is above)");
  }
}

EXERCISE("event-handoff", "A consumer ordered after another process's producer by an interprocess event",
         "cuIpcOpenEventHandle(&event, produced), then cuStreamWaitEvent(stream, event, 0), then "
         "cuMemcpyDtoHAsync(host, shared, bytes, stream); return the event. If the wait or the copy fails, "
         "cuEventDestroy(event) before CU_CHECK throws. Waiting on the host (cuEventSynchronize) blocks the consumer "
         "until the producer is done; copying without the wait reads the buffer before the producer has written it.") {
  // The producer: its stream held by a gate; behind it the new value over the shared buffer and the
  // interprocess event; the buffer's and the events' handles sent; the gate opened when told.
  TEST_CASE("child: a producer behind a gate" * doctest::skip(!wbt::inChild())) {
    const int parent = parentChannel();
    Lab lab(true);
    Stream stream;
    CUevent events[3] = {};  // produced, and two spares for the failure paths
    for (CUevent& e : events) REQUIRE(cuEventCreate(&e, CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING) == CUDA_SUCCESS);
    const size_t bytes = 4u << 20, words = bytes / 4;
    wbt::DeviceBuffer buffer(bytes);
    wbt::setWords(buffer.get(), kStale, words);
    Note spares = note("spares");
    CUipcEventHandle spare[2] = {};
    REQUIRE(cuIpcGetEventHandle(&spare[0], events[1]) == CUDA_SUCCESS);
    REQUIRE(cuIpcGetEventHandle(&spare[1], events[2]) == CUDA_SUCCESS);
    static_assert(sizeof spares.event == sizeof(CUipcEventHandle) && sizeof spares.mem == sizeof(CUipcEventHandle),
                  "a note holds two event handles");
    std::memcpy(spares.event, &spare[0], sizeof spare[0]);
    std::memcpy(spares.mem, &spare[1], sizeof spare[1]);
    tell(parent, note("ready"));
    tell(parent, spares);
    await(parent, "produce");
    wb::Gate::Outcome seen = wb::Gate::TimedOut;
    {
      wb::Gate gate(lab.k.gate, stream.get(), kGateSeconds);
      CU_CHECK(cuMemsetD32Async(buffer.get(), kFresh, words, stream.get()));
      CU_CHECK(cuEventRecord(events[0], stream.get()));
      Note offer = note("produced", static_cast<int64_t>(bytes));
      CUipcMemHandle mem{};
      CUipcEventHandle event{};
      REQUIRE(cuIpcGetMemHandle(&mem, buffer.get()) == CUDA_SUCCESS);
      REQUIRE(cuIpcGetEventHandle(&event, events[0]) == CUDA_SUCCESS);
      std::memcpy(offer.mem, &mem, sizeof mem);
      std::memcpy(offer.event, &event, sizeof event);
      tell(parent, offer);
      await(parent, "open");
      seen = gate.outcome();  // Waiting: copyAfter had returned without waiting for it
    }
    CU_CHECK(cuStreamSynchronize(stream.get()));
    tell(parent, note("opened", seen));
    await(parent, "done");  // the consumer has destroyed its events and closed the buffer
    for (CUevent e : events) CHECK(cuEventDestroy(e) == CUDA_SUCCESS);
  }

  TEST_CASE("R1 R2 R3 R4 R5: copyAfter returns with the copy pending behind the producer's event, holding only that event, the copy then reads the producer's new data, and a failed open, wait or copy throws and leaks nothing") {
    if (wb::underSanitizer()) throw wbx::Skipped("compute-sanitizer runs no kernel beside a waiting gate (lesson 09)");
    needSharedDevice(0);
    Child producer("child: a producer behind a gate");
    Lab lab;
    Stream stream;
    producer.hear("ready");
    const Note spares = producer.hear("spares");
    producer.say(note("produce"));
    const Note offer = producer.hear("produced");
    const size_t bytes = static_cast<size_t>(offer.v[0]), words = bytes / 4;
    CUipcMemHandle mem{};
    CUipcEventHandle event{};
    std::memcpy(&mem, offer.mem, sizeof mem);
    std::memcpy(&event, offer.event, sizeof event);
    CUdeviceptr shared = 0;
    CU_CHECK(cuIpcOpenMemHandle(&shared, mem, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS));
    PinnedBuffer host(words);

    const std::vector<CUcontext> stackBefore = wbx::contextStack();
    const wbx::Holdings before = wbx::holdings();
    const CUevent opened = ex17::copyAfter(event, shared, host.get(), bytes, stream.get());
    const std::string heldAfter = wbx::holdings().differenceFrom(before);
    const bool stackKept = wbx::contextStack() == stackBefore;
    const CUresult pending = cuStreamQuery(stream.get());
    const uint32_t pendingWord = host.get()[0];
    producer.say(note("open"));
    const Note gateSeen = producer.hear("opened");
    CU_CHECK(cuStreamSynchronize(stream.get()));
    const size_t fresh = host.count(kFresh), stale = host.count(kStale);
    const bool returnedEvent = opened != nullptr;
    if (opened) cuEventDestroy(opened);
    const std::string heldAtEnd = wbx::holdings().differenceFrom(before);

    // The failure paths, each on a spare event of the producer (never recorded: a wait on it is
    // already satisfied), with the driver's answer to one call turned into an error.
    CUipcEventHandle spare[2] = {};
    std::memcpy(&spare[0], spares.event, sizeof spare[0]);
    std::memcpy(&spare[1], spares.mem, sizeof spare[1]);
    bool openFailedThrew = false, openFired = false;
    bool waitFailedThrew = false, waitFired = false, copyFailedThrew = false, copyFired = false;
    std::string heldAfterFailedOpen, heldAfterFailedWait, heldAfterFailedCopy;
    {  // the producer may have gone: an open that fails is an error, not "nothing to wait for"
      const wbx::Holdings ahead = wbx::holdings();
      wbx::FailCall fail("cuIpcOpenEventHandle", CUDA_ERROR_INVALID_VALUE);
      openFailedThrew = threw([&] { ex17::copyAfter(spare[0], shared, host.get(), bytes, stream.get()); });
      openFired = fail.fired();
      heldAfterFailedOpen = wbx::holdings().differenceFrom(ahead);
    }
    {
      const wbx::Holdings ahead = wbx::holdings();
      wbx::FailCall fail("cuStreamWaitEvent", CUDA_ERROR_INVALID_HANDLE);
      waitFailedThrew = threw([&] { ex17::copyAfter(spare[0], shared, host.get(), bytes, stream.get()); });
      waitFired = fail.fired();
      heldAfterFailedWait = wbx::holdings().differenceFrom(ahead);
    }
    {
      const wbx::Holdings ahead = wbx::holdings();
      wbx::FailCall fail("cuMemcpyDtoHAsync", CUDA_ERROR_INVALID_VALUE);
      copyFailedThrew = threw([&] { ex17::copyAfter(spare[1], shared, host.get(), bytes, stream.get()); });
      copyFired = fail.fired();
      heldAfterFailedCopy = wbx::holdings().differenceFrom(ahead);
    }
    CU_CHECK(cuStreamSynchronize(stream.get()));
    CU_CHECK(cuIpcCloseMemHandle(shared));
    producer.say(note("done"));
    const wb::ProcessEnd& end = producer.channel.end();

    const std::string pendingName = wb::errorName(pending);
    CAPTURE(pendingName);
    CAPTURE(fresh);
    CAPTURE(stale);
    CAPTURE(heldAfter);
    CHECK_MESSAGE(pending == CUDA_ERROR_NOT_READY, "the stream was not waiting for the producer's event");
    CHECK_MESSAGE(pendingWord == kUnread, "the copy had run before the producer's write");
    CHECK_MESSAGE(gateSeen.v[0] == wb::Gate::Waiting,
                  "the producer's gate had given up: copyAfter waited on the host for the producer's work");
    CHECK_MESSAGE(stale == 0, "the copy read the buffer before the producer wrote it");
    CHECK(fresh == words);
    CHECK_MESSAGE(stackKept, "copyAfter changed the calling thread's context stack");
    CHECK_MESSAGE(returnedEvent, "copyAfter returned no event: the caller destroys the opened event");
    CHECK_MESSAGE(heldAfter == "1 event more",
                  "after copyAfter the process should hold exactly one event more, the one it returned");
    CHECK_MESSAGE(heldAtEnd == "", "once the returned event was destroyed, something copyAfter made was still held");
    CHECK_MESSAGE(openFired, "copyAfter did not open the producer's event with cuIpcOpenEventHandle");
    CHECK_MESSAGE(openFailedThrew, "copyAfter did not throw when cuIpcOpenEventHandle failed");
    CAPTURE(heldAfterFailedOpen);
    CHECK_MESSAGE(heldAfterFailedOpen == "", "when the open failed, copyAfter still made something that outlived it");
    CHECK_MESSAGE(waitFired, "copyAfter did not call cuStreamWaitEvent: nothing else orders a stream after an event");
    CHECK_MESSAGE(waitFailedThrew, "copyAfter did not throw when cuStreamWaitEvent failed");
    CAPTURE(heldAfterFailedWait);
    CHECK_MESSAGE(heldAfterFailedWait == "", "when cuStreamWaitEvent failed, copyAfter kept the opened event");
    if (copyFired) {
      CHECK_MESSAGE(copyFailedThrew, "copyAfter did not throw when its copy failed");
      CAPTURE(heldAfterFailedCopy);
      CHECK_MESSAGE(heldAfterFailedCopy == "", "when the copy failed, copyAfter kept the opened event");
    } else {
      MESSAGE("the copy was not made with cuMemcpyDtoHAsync: its failure path was not provoked");
    }
    CHECK(end.code == 0);
  }
}

EXERCISE("share-server", "Handing device memory to another process and keeping none of it",
         "prop.location.id = dev and requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR; round bytes up "
         "to cuMemGetAllocationGranularity(MINIMUM); cuMemCreate, cuMemAddressReserve, cuMemMap, cuMemSetAccess, "
         "cuMemcpyHtoD, cuMemExportToShareableHandle; wb::sendMessage(socket, &offer, sizeof offer, fd), "
         "wb::receiveMessage for the reply. Hold the handle, range, mapping and descriptor in an object whose "
         "destructor gives each back (close(fd), cuMemUnmap, cuMemAddressFree, cuMemRelease), so that a throw "
         "gives them back too: an open descriptor keeps the memory as surely as a handle or a mapping does.") {
  // The client: refuses the first two offers (mapped = 0, then mapped = 2: only 1 says it mapped
  // the memory); imports, maps and reports the third, replies, and on the
  // check's word reads it, unmaps it, and waits to be let go (so its context stays while the check
  // reads free memory).
  TEST_CASE("child: a client of the share server" * doctest::skip(!wbt::inChild())) {
    const int parent = parentChannel();
    const char* ordinal = std::getenv("WORKBOOK_SHARE_DEVICE");
    REQUIRE(ordinal != nullptr);
    OnDevice lab(std::atoi(ordinal));
    tell(parent, note("ready"));
    for (uint32_t answer : {0u, 2u}) {
      ex17::ShareOffer offer{};
      int fd = -1;
      REQUIRE(wb::receiveMessage(parent, &offer, sizeof offer, &fd, kReplySeconds) == wb::Received::Message);
      if (fd >= 0) close(fd);
      const ex17::ShareReply refused{answer};
      REQUIRE(wb::sendMessage(parent, &refused, sizeof refused));
    }
    ex17::ShareOffer offer{};
    int fd = -1;
    REQUIRE(wb::receiveMessage(parent, &offer, sizeof offer, &fd, kReplySeconds) == wb::Received::Message);
    const size_t size = static_cast<size_t>(offer.bytes);
    CUmemGenericAllocationHandle handle = 0;
    CUresult failed = fd >= 0 ? cuMemImportFromShareableHandle(&handle, reinterpret_cast<void*>(static_cast<uintptr_t>(fd)),
                                                               CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
                              : CUDA_ERROR_INVALID_VALUE;
    if (fd >= 0) close(fd);
    CUmemAllocationProp prop{};
    if (failed == CUDA_SUCCESS) failed = cuMemGetAllocationPropertiesFromHandle(&prop, handle);
    CUdeviceptr ptr = 0;
    bool reserved = false, mapped = false;
    if (failed == CUDA_SUCCESS) {
      failed = cuMemAddressReserve(&ptr, size, granularity(lab.dev), 0, 0);
      reserved = failed == CUDA_SUCCESS;
    }
    if (failed == CUDA_SUCCESS) {
      failed = cuMemMap(ptr, size, 0, handle, 0);
      mapped = failed == CUDA_SUCCESS;
    }
    if (handle) cuMemRelease(handle);
    CUmemAccessDesc access{};
    access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    access.location.id = lab.dev;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    if (failed == CUDA_SUCCESS) failed = cuMemSetAccess(ptr, size, &access, 1);
    const ex17::ShareReply reply{failed == CUDA_SUCCESS ? 1u : 0u};
    REQUIRE(wb::sendMessage(parent, &reply, sizeof reply));
    tell(parent, note("imported", prop.location.id, static_cast<int64_t>(size), failed));
    if (failed == CUDA_SUCCESS) {
      const Note verify = await(parent, "verify");
      const size_t words = static_cast<size_t>(verify.v[0]) / 4;
      std::vector<uint32_t> seen(words);
      CU_CHECK(cuMemcpyDtoH(seen.data(), ptr, words * 4));
      size_t right = 0;
      for (size_t i = 0; i < words; ++i) right += seen[i] == patternAt(static_cast<uint32_t>(verify.v[1]), i);
      CU_CHECK(cuMemUnmap(ptr, size));
      mapped = false;
      tell(parent, note("verified", static_cast<int64_t>(right)));
    }
    if (mapped) cuMemUnmap(ptr, size);
    if (reserved) cuMemAddressFree(ptr, size);
    await(parent, "bye");
  }

  TEST_CASE("R1 R2 R3 R4: a closed socket and a client that replies mapped = 0 or 2 make it throw std::runtime_error holding nothing; after a handoff this process holds nothing, the client has all of the data on the right device, and its unmap gives the memory back") {
    const int count = deviceCount();
    const int ordinal = count >= 2 ? 1 : 0;
    needSharedDevice(ordinal);
    Child client("child: a client of the share server", {"WORKBOOK_SHARE_DEVICE=" + std::to_string(ordinal)});
    OnDevice lab(ordinal);
    if (wbt::attribute(lab.dev, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED) != 1)
      throw wbx::Skipped("device " + std::to_string(ordinal) + " cannot export memory as a POSIX file descriptor");
    const size_t granule = granularity(lab.dev);
    const size_t bytes = (size_t{64} << 20) + granule / 2 + 1, words = (bytes + 3) / 4, kSlack = size_t{32} << 20;
    const size_t rounded = (bytes + granule - 1) / granule * granule;
    const uint32_t seed = 0x5E2FE2u;
    std::vector<uint32_t> data(words);
    for (size_t i = 0; i < words; ++i) data[i] = patternAt(seed, i);
    {
      wbt::DeviceBuffer warm(1u << 20);  // first-use costs of this context, before the reading below
      CU_CHECK(cuMemcpyHtoD(warm.get(), data.data(), 1u << 20));
    }
    exportOnce(lab.dev);
    client.hear("ready");  // the client's context exists, and so does the pipe that reads its output
    const wbx::Holdings before = wbx::holdings();
    const size_t descriptorsBefore = openDescriptors();

    int gone[2] = {-1, -1};
    REQUIRE(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, gone) == 0);
    close(gone[1]);
    const bool threwWhenGone = threwRuntimeError([&] { ex17::shareWithClient(gone[0], lab.dev, data.data(), bytes); });
    close(gone[0]);
    const std::string heldWhenGone = wbx::holdings().differenceFrom(before);
    const size_t descriptorsWhenGone = openDescriptors();

    const bool threwWhenRefused =
        threwRuntimeError([&] { ex17::shareWithClient(client.channel.socket(), lab.dev, data.data(), bytes); });
    const std::string heldWhenRefused = wbx::holdings().differenceFrom(before);
    const size_t descriptorsWhenRefused = openDescriptors();
    const bool threwWhenTwo =
        threwRuntimeError([&] { ex17::shareWithClient(client.channel.socket(), lab.dev, data.data(), bytes); });
    const std::string heldWhenTwo = wbx::holdings().differenceFrom(before);
    const size_t descriptorsWhenTwo = openDescriptors();

    const size_t freeBefore = wbt::freeMemory();
    ex17::shareWithClient(client.channel.socket(), lab.dev, data.data(), bytes);
    const std::string heldAfter = wbx::holdings().differenceFrom(before);
    const size_t descriptorsAfter = openDescriptors();
    const Note imported = client.hear("imported");
    const std::string importName = wb::errorName(static_cast<CUresult>(imported.v[2]));
    CAPTURE(importName);
    REQUIRE_MESSAGE(imported.v[2] == CUDA_SUCCESS, "the client could not import and map what was offered");
    client.say(note("verify", static_cast<int64_t>(bytes), seed));
    const Note verified = client.hear("verified");
    const size_t freeAfter = wbt::freeMemory();
    client.say(note("bye"));
    const wb::ProcessEnd& end = client.channel.end();

    CAPTURE(descriptorsBefore);
    CHECK_MESSAGE(threwWhenGone, "shareWithClient did not throw std::runtime_error when the offer could not be sent");
    CAPTURE(heldWhenGone);
    CHECK_MESSAGE(heldWhenGone == "", "after the failed send this process still holds part of the memory");
    CAPTURE(descriptorsWhenGone);
    CHECK_MESSAGE(descriptorsWhenGone == descriptorsBefore, "after the failed send a descriptor stayed open");
    CHECK_MESSAGE(threwWhenRefused, "shareWithClient did not throw std::runtime_error when the client replied mapped = 0");
    CAPTURE(heldWhenRefused);
    CHECK_MESSAGE(heldWhenRefused == "", "after the refusal this process still holds part of the memory");
    CAPTURE(descriptorsWhenRefused);
    CHECK_MESSAGE(descriptorsWhenRefused == descriptorsBefore, "after the refusal a descriptor stayed open");
    CHECK_MESSAGE(threwWhenTwo, "shareWithClient did not throw std::runtime_error when the client replied mapped = 2: "
                                "only 1 says the client mapped the memory");
    CAPTURE(heldWhenTwo);
    CHECK_MESSAGE(heldWhenTwo == "", "after the reply mapped = 2 this process still holds part of the memory");
    CAPTURE(descriptorsWhenTwo);
    CHECK_MESSAGE(descriptorsWhenTwo == descriptorsBefore, "after the reply mapped = 2 a descriptor stayed open");
    CAPTURE(heldAfter);
    CHECK_MESSAGE(heldAfter == "", "after the handoff this process still holds part of the memory");
    CAPTURE(descriptorsAfter);
    CHECK_MESSAGE(descriptorsAfter == descriptorsBefore,
                  "after the handoff a descriptor stayed open: the exported one keeps the memory alive");
    CHECK_MESSAGE(imported.v[1] == static_cast<int64_t>(rounded),
                  "the offer did not carry the allocation's size: bytes rounded up to the minimum granularity");
    CHECK_MESSAGE(imported.v[0] == ordinal, "the memory was not made on dev");
    CHECK_MESSAGE(verified.v[0] == static_cast<int64_t>(bytes / 4),
                  "the client did not read the data: the memory was not what was shared");
    CAPTURE(freeBefore);
    CAPTURE(freeAfter);
    CHECK_MESSAGE(freeAfter + kSlack >= freeBefore,
                  "the memory stayed taken after the client unmapped it: this process still holds part of it");
    CHECK(end.code == 0);
    if (count < 2)
      throw wbx::Skipped("with one device, memory made on device 0 instead of dev cannot be told apart (the rest "
                         "passed)");
  }
}
