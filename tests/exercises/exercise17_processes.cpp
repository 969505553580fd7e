// The checks of lesson 17's exercises (lessons/17-processes/exercises.cpp). The other process of
// each exercise is this check again, running one child test case with a time limit, and every wait
// for its messages has a deadline; a check that stops early tells it to end. share-server reads the
// device's free memory, so it runs with the GPU to itself.
#include "check.hpp"
#include "lesson17_processes.hpp"
#include "channel.hpp"
#include "gate.hpp"
#include "17-processes/exercises.hpp"

#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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
  explicit Child(const char* testCase)
      : l17::Child(testCase, {"WORKBOOK_CHILD=1", "WORKBOOK_EXERCISE_RESULTS"}, kChildSeconds) {}
};

using wbt::Stream;

// ---- fork-pool ----------------------------------------------------------------------------------

// Counted at every fork() of this process, just before it (pthread_atfork's prepare handler runs in
// the forking process): forks, and forks at which CUDA was initialised here. cuDeviceGetCount
// answers CUDA_ERROR_NOT_INITIALIZED until cuInit, and initialises nothing.
std::atomic<int> forksSeen{0}, forksAfterInit{0};

void beforeFork() {
  ++forksSeen;
  int count = 0;
  if (cuDeviceGetCount(&count) != CUDA_ERROR_NOT_INITIALIZED) ++forksAfterInit;
}

// What each worker runs: CUDA from cuInit on, in the worker's own process; 1000 + index through
// device memory; and the worker's process id.
std::string gpuJob(unsigned index) {
  CU_CHECK(cuInit(0));
  CUdevice dev = 0;
  CU_CHECK(cuDeviceGet(&dev, 0));
  CUcontext ctx = nullptr;
  CU_CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
  CU_CHECK(cuCtxSetCurrent(ctx));
  CUdeviceptr word = 0;
  CU_CHECK(cuMemAlloc(&word, sizeof(unsigned)));
  CU_CHECK(cuMemsetD32(word, 1000 + index, 1));
  unsigned back = 0;
  CU_CHECK(cuMemcpyDtoH(&back, word, sizeof back));
  CU_CHECK(cuMemFree(word));
  CU_CHECK(cuCtxSetCurrent(nullptr));
  CU_CHECK(cuDevicePrimaryCtxRelease(dev));
  return "worker " + std::to_string(index) + " in process " + std::to_string(getpid()) + " read " +
         std::to_string(back);
}

// ---- event-handoff --------------------------------------------------------------------------------

// ---- share-server ---------------------------------------------------------------------------------

}  // namespace

EXERCISE("fork-pool", "A pool of forked workers, each initialising CUDA itself",
         "cuDriverGetVersion answers without initialising CUDA: use it, never cuInit, to find the driver here. "
         "Then for each worker a pipe2 and a fork; in the worker alarm(limitSeconds), job(i), write the line, "
         "_exit(0) (and _exit(1) if job throws). Fork them all, then read each pipe to its end and waitpid each; "
         "fflush(stdout) before forking, or buffered output is written twice.") {
  // In a process of its own that has made no CUDA call: the learner's pool, under the fork detector.
  TEST_CASE("child: runForked in a process that has made no CUDA call" * doctest::skip(!wbt::inChild())) {
    static const bool registered = pthread_atfork(beforeFork, nullptr, nullptr) == 0;
    const unsigned n = 4;
    const std::vector<std::string> lines = ex17::runForked(n, gpuJob, 10);
    const int forks = forksSeen.load(), initialisedAtFork = forksAfterInit.load();
    REQUIRE_MESSAGE(registered, "pthread_atfork failed: the forks cannot be watched");
    CAPTURE(forks);
    CHECK_MESSAGE(initialisedAtFork == 0, "CUDA was initialised in this process when it forked a worker");
    CHECK_MESSAGE(forks >= static_cast<int>(n), "the workers were not made by fork()");
    REQUIRE(lines.size() == n);
    std::set<int> pids;
    for (unsigned i = 0; i < n; ++i) {
      CAPTURE(i);
      unsigned index = 0, value = 0;
      int pid = 0;
      const bool read = std::sscanf(lines[i].c_str(), "worker %u in process %d read %u", &index, &pid, &value) == 3;
      const std::string expected = "worker " + std::to_string(i) + " in process " + (read ? std::to_string(pid) : "?") +
                                   " read " + std::to_string(1000 + i);
      CHECK_MESSAGE(lines[i] == expected, "the worker's line is wrong or empty: it failed, or ran another index");
      CHECK_MESSAGE(pid != getpid(), "the job ran in this process, not in a worker");
      pids.insert(pid);
    }
    CHECK_MESSAGE(pids.size() == n, "two jobs ran in the same process");
  }

  TEST_CASE("four workers forked from a process that has not initialised CUDA each initialise it, compute right, and report from a process of their own") {
    const wbx::ChildResult child = wbx::runInChild("child: runForked in a process that has made no CUDA call", 60);
    const std::string output = child.output;
    CAPTURE(output);
    CHECK_FALSE(child.timedOut);
    CHECK_MESSAGE((!child.crashed && child.code == 0), "the pool's checks failed in its process (its output is above)");
  }
}

EXERCISE("event-handoff", "A consumer ordered after another process's producer by an interprocess event",
         "cuIpcOpenEventHandle(&event, produced), then cuStreamWaitEvent(stream, event, 0), then "
         "cuMemcpyDtoHAsync(host, shared, bytes, stream); return the event. Waiting on the host "
         "(cuEventSynchronize) blocks the consumer until the producer is done; copying without the wait reads the "
         "buffer before the producer has written it.") {
  // The producer: its stream held by a gate; behind it the new value over the shared buffer and the
  // interprocess event; the buffer's and the event's handles sent; the gate opened when told.
  TEST_CASE("child: a producer behind a gate" * doctest::skip(!wbt::inChild())) {
    const int parent = parentChannel();
    Lab lab(true);
    Stream stream;
    CUevent produced = nullptr;
    REQUIRE(cuEventCreate(&produced, CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING) == CUDA_SUCCESS);
    const size_t bytes = 4u << 20, words = bytes / 4;
    wbt::DeviceBuffer buffer(bytes);
    CU_CHECK(cuMemsetD32(buffer.get(), kStale, words));
    CU_CHECK(cuCtxSynchronize());
    tell(parent, note("ready"));
    await(parent, "produce");
    wb::Gate::Outcome seen = wb::Gate::TimedOut;
    {
      wb::Gate gate(lab.k.gate, stream.get(), kGateSeconds);
      CU_CHECK(cuMemsetD32Async(buffer.get(), kFresh, words, stream.get()));
      CU_CHECK(cuEventRecord(produced, stream.get()));
      Note offer = note("produced", static_cast<int64_t>(bytes));
      CUipcMemHandle mem{};
      CUipcEventHandle event{};
      REQUIRE(cuIpcGetMemHandle(&mem, buffer.get()) == CUDA_SUCCESS);
      REQUIRE(cuIpcGetEventHandle(&event, produced) == CUDA_SUCCESS);
      std::memcpy(offer.mem, &mem, sizeof mem);
      std::memcpy(offer.event, &event, sizeof event);
      tell(parent, offer);
      await(parent, "open");
      seen = gate.outcome();  // Waiting: copyAfter had returned without waiting for it
    }
    CU_CHECK(cuStreamSynchronize(stream.get()));
    tell(parent, note("opened", seen));
    await(parent, "done");  // the consumer has destroyed its event and closed the buffer
    CHECK(cuEventDestroy(produced) == CUDA_SUCCESS);
  }

  TEST_CASE("copyAfter returns with the copy pending behind the producer's event, and the copy then reads the producer's new data, never the old") {
    if (wb::underSanitizer()) throw wbx::Skipped("compute-sanitizer runs no kernel beside a waiting gate (lesson 09)");
    Child producer("child: a producer behind a gate");
    Lab lab;
    producer.hear("ready");
    producer.say(note("produce"));
    const Note offer = producer.hear("produced");
    const size_t bytes = static_cast<size_t>(offer.v[0]), words = bytes / 4;
    CUipcMemHandle mem{};
    CUipcEventHandle event{};
    std::memcpy(&mem, offer.mem, sizeof mem);
    std::memcpy(&event, offer.event, sizeof event);
    CUdeviceptr shared = 0;
    CU_CHECK(cuIpcOpenMemHandle(&shared, mem, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS));
    CUresult pending = CUDA_SUCCESS;
    uint32_t pendingWord = 0;
    size_t fresh = 0, stale = 0;
    Note opened;
    {
      Stream s;
      PinnedBuffer host(words);
      CUevent theirs = nullptr;
      try {
        theirs = ex17::copyAfter(event, shared, host.get(), bytes, s.get());
      } catch (...) {
        cuIpcCloseMemHandle(shared);
        throw;
      }
      pending = cuStreamQuery(s.get());
      pendingWord = host.get()[0];
      producer.say(note("open"));
      opened = producer.hear("opened");
      CU_CHECK(cuStreamSynchronize(s.get()));
      fresh = host.count(kFresh), stale = host.count(kStale);
      if (theirs) cuEventDestroy(theirs);  // before the producer destroys its own
    }
    CU_CHECK(cuIpcCloseMemHandle(shared));
    producer.say(note("done"));
    const wb::ProcessEnd& end = producer.channel.end();
    const std::string pendingName = wb::errorName(pending);
    CAPTURE(pendingName);
    CAPTURE(fresh);
    CAPTURE(stale);
    CHECK_MESSAGE(pending == CUDA_ERROR_NOT_READY, "the stream was not waiting for the producer's event");
    CHECK_MESSAGE(pendingWord == kUnread, "the copy had run before the producer's write");
    CHECK_MESSAGE(opened.v[0] == wb::Gate::Waiting,
                  "the producer's gate had given up: copyAfter waited on the host for the producer's work");
    CHECK_MESSAGE(stale == 0, "the copy read the buffer before the producer wrote it");
    CHECK(fresh == words);
    CHECK(end.code == 0);
  }
}

EXERCISE("share-server", "Handing device memory to another process and keeping none of it",
         "cuMemCreate with requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, map it here to "
         "cuMemcpyHtoD the data, cuMemExportToShareableHandle, cuMemRelease; wb::sendMessage(socket, &offer, "
         "sizeof offer, fd), wb::receiveMessage for the reply; then cuMemUnmap, cuMemAddressFree and close(fd): "
         "an open descriptor keeps the memory as surely as a handle or a mapping does.") {
  // The client: imports and maps what the server sends, replies, and on the check's word reads it,
  // unmaps it, and waits to be let go (so its context stays while the check reads free memory).
  TEST_CASE("child: a client of the share server" * doctest::skip(!wbt::inChild())) {
    const int parent = parentChannel();
    Lab lab;
    tell(parent, note("ready"));
    ex17::ShareOffer offer{};
    int fd = -1;
    REQUIRE(wb::receiveMessage(parent, &offer, sizeof offer, &fd, kReplySeconds) == wb::Received::Message);
    REQUIRE(fd >= 0);
    CUmemGenericAllocationHandle handle = 0;
    const CUresult imported = cuMemImportFromShareableHandle(
        &handle, reinterpret_cast<void*>(static_cast<uintptr_t>(fd)), CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
    close(fd);
    REQUIRE(imported == CUDA_SUCCESS);
    const size_t size = static_cast<size_t>(offer.bytes);
    CUdeviceptr ptr = 0;
    CU_CHECK(cuMemAddressReserve(&ptr, size, granularity(lab.dev()), 0, 0));
    CU_CHECK(cuMemMap(ptr, size, 0, handle, 0));
    CU_CHECK(cuMemRelease(handle));
    CUmemAccessDesc access{};
    access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    access.location.id = lab.dev();
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    CU_CHECK(cuMemSetAccess(ptr, size, &access, 1));
    const ex17::ShareReply reply{1};
    REQUIRE(wb::sendMessage(parent, &reply, sizeof reply));
    const Note verify = await(parent, "verify");
    const size_t words = static_cast<size_t>(verify.v[0]) / 4;
    std::vector<uint32_t> seen(words);
    CU_CHECK(cuMemcpyDtoH(seen.data(), ptr, words * 4));
    size_t right = 0;
    for (size_t i = 0; i < words; ++i) right += seen[i] == patternAt(static_cast<uint32_t>(verify.v[1]), i);
    CU_CHECK(cuMemUnmap(ptr, size));
    CU_CHECK(cuMemAddressFree(ptr, size));
    tell(parent, note("verified", static_cast<int64_t>(right)));
    await(parent, "bye");
  }

  TEST_CASE("after shareWithClient returns the client reads all of the data, and once the client unmaps it the device's free memory is back where it was") {
    Child client("child: a client of the share server");
    Lab lab;
    if (wbt::attribute(lab.dev(), CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED) != 1)
      throw wbx::Skipped("device 0 cannot export memory as a POSIX file descriptor");
    const size_t bytes = size_t{256} << 20, words = bytes / 4, kSlack = size_t{32} << 20;
    const uint32_t seed = 0x5E2FE2u;
    std::vector<uint32_t> data(words);
    for (size_t i = 0; i < words; ++i) data[i] = patternAt(seed, i);
    {
      wbt::DeviceBuffer warm(1u << 20);  // first-use costs of this context, before the reading below
      CU_CHECK(cuMemcpyHtoD(warm.get(), data.data(), 1u << 20));
    }
    client.hear("ready");  // the client's context exists: it is in both readings
    const size_t freeBefore = wbt::freeMemory();
    ex17::shareWithClient(client.channel.socket(), lab.dev(), data.data(), bytes);
    client.say(note("verify", static_cast<int64_t>(bytes), seed));
    const Note verified = client.hear("verified");
    const size_t freeAfter = wbt::freeMemory();
    client.say(note("bye"));
    const wb::ProcessEnd& end = client.channel.end();
    CAPTURE(freeBefore);
    CAPTURE(freeAfter);
    CHECK_MESSAGE(verified.v[0] == static_cast<int64_t>(words),
                  "the client did not read the data: the memory was not what was shared");
    CHECK_MESSAGE(freeAfter + kSlack >= freeBefore,
                  "the memory stayed taken after the client unmapped it: this process still holds part of it");
    CHECK(end.code == 0);
  }
}
