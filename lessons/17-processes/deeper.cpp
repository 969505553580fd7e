// Lesson 17, going deeper: ordering another process's work with an interprocess event (the optional
// page's program).
//
// What you learn: sharing memory is half of a handoff; the consumer must also not read it before
// the producer has written it. An interprocess event orders a consumer's stream after a producer's
// work: the producer records an event made with CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING and
// sends its handle (cuIpcGetEventHandle) with the descriptor of the shared buffer; the consumer opens
// it (cuIpcOpenEventHandle), makes its stream wait for it, and its copy stays pending until the
// producer's work is done. The producer keeps its event until the consumer has destroyed its own.
// Its step continues main.cpp's (1 to 4); the child has a time limit, and every wait a deadline.
//
// APIs: cuEventCreate, cuIpcGetEventHandle, cuIpcOpenEventHandle, cuStreamWaitEvent,
//       cuMemcpyDtoHAsync, cuEventQuery, cuEventSynchronize, cuMemCreate, cuMemExportToShareableHandle,
//       cuMemImportFromShareableHandle
// Run:  ctest -R lesson17   (or build/lessons/lesson17-processes-deeper)
#include "channel.hpp"
#include "gate.hpp"
#include "process.hpp"
#include "processes.hpp"
#include "workbook.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

using Kernels = wb::StreamKernels;  // gate, stamp and burn (common/gate.hpp)

constexpr unsigned kChildSeconds = 20;    // the producer's time limit: nothing here waits longer
constexpr double kGateSeconds = 5;        // its gate kernel gives up after this
constexpr unsigned kStale = 0xDEADBEEFu;  // what the producer's buffer holds before it produces
constexpr unsigned kFresh = 0x600DDA7Au;  // what it produces
constexpr unsigned kUnread = 0xFFFFFFFFu; // what the consumer's host buffer holds before its copy

// Parent and child talk through common/processes.hpp, as in main.cpp.
using wb::Mapped;
using wb::note;
using wb::Note;
using wb::talk::await;
using wb::talk::Primary;
using wb::talk::Quit;
using wb::talk::tell;

std::string howItEnded(const wb::ProcessEnd& end) { return wb::talk::howItEnded(end, kChildSeconds); }

Note hear(wb::ChildChannel& child, const char* who, const char* what, int* fd = nullptr) {
  return wb::talk::hear(child, who, what, kChildSeconds, fd);
}

// The child of this program, started at once so that its start-up overlaps the parent's, without
// CUDA_LAUNCH_BLOCKING (its gate kernel must leave its stream busy); still waiting for its word when
// the program stops early, it is told to end now.
struct Children {
  wb::ChildChannel producer{{wb::selfPath(), "--child", "producer"}, {"CUDA_LAUNCH_BLOCKING"}, kChildSeconds};
  ~Children() { producer.send(note("quit")); }
};

//! [producer]
// In a child, "the producer": its event is made for other processes (CU_EVENT_INTERPROCESS needs
// CU_EVENT_DISABLE_TIMING with it); on the consumer's word, its buffer, shared by descriptor, is
// made to hold the stale value.
int childProducer(int parent) {
  Primary p;
  CUlibrary library = nullptr;
  CU_CHECK(cuLibraryLoadFromFile(&library, wb::verifiedImagePath("streams.fatbin").c_str(), nullptr, nullptr,
                                 0, nullptr, nullptr, 0));
  const Kernels k = Kernels::load(library);
  CUstream stream = nullptr;
  CU_CHECK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  CUevent produced = nullptr;
  CU_CHECK(cuEventCreate(&produced, CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING));
  tell(parent, note("ready"));
  await(parent, "produce");
  const wb::Shared s = wb::createShared(p.dev, 4u << 20);
  const size_t words = s.mapped.size / sizeof(uint32_t);
  CU_CHECK(cuMemsetD32(s.mapped.ptr, kStale, words));
  CU_CHECK(cuCtxSynchronize());
  //! [producer]
  //! [producer-gate]
  // Then the gate, the new value behind it, the event behind that; the event's handle and the
  // buffer's descriptor sent. The gate opens when the consumer says so, and the event is destroyed
  // only after the consumer has destroyed its own (the reverse is undefined).
  wb::Gate::Outcome seen = wb::Gate::TimedOut;
  {
    wb::Gate gate(k.gate, stream, kGateSeconds);
    CU_CHECK(cuMemsetD32Async(s.mapped.ptr, kFresh, words, stream));
    CU_CHECK(cuEventRecord(produced, stream));
    Note offer = note("produced", static_cast<int64_t>(s.mapped.size));
    CUipcEventHandle handle{};
    CU_CHECK(cuIpcGetEventHandle(&handle, produced));
    std::memcpy(offer.event, &handle, sizeof handle);
    tell(parent, offer, s.fd);
    await(parent, "open");
    seen = gate.outcome();  // Waiting: nothing had run behind it yet
    gate.open();
  }
  CU_CHECK(cuStreamSynchronize(stream));
  tell(parent, note("opened", seen));
  await(parent, "done");
  CU_CHECK(cuEventDestroy(produced));
  wb::unmap(s.mapped);
  close(s.fd);
  //! [producer-gate]
  CU_CHECK(cuStreamDestroy(stream));
  CU_CHECK(cuLibraryUnload(library));
  return wb::kExitOk;
}

//! [consumer]
// This process, the consumer: its stream waits for the producer's event, then copies the shared
// buffer into pinned host memory. Both calls only enqueue; the copy must stay pending until the
// producer's gate opens.
void interprocessEvent(Children& kids, CUdevice dev) {
  kids.producer.send(note("produce"));
  int fd = -1;
  const Note offer = hear(kids.producer, "the producer", "produced", &fd);
  const Mapped shared = wb::importShared(fd, static_cast<size_t>(offer.v[0]), dev);
  const size_t words = shared.size / sizeof(uint32_t);
  CUipcEventHandle handle{};
  std::memcpy(&handle, offer.event, sizeof handle);
  CUevent ready = nullptr, copied = nullptr;
  CU_CHECK(cuIpcOpenEventHandle(&ready, handle));
  CU_CHECK(cuEventCreate(&copied, CU_EVENT_DISABLE_TIMING));
  CUstream stream = nullptr;
  CU_CHECK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  uint32_t* host = nullptr;
  CU_CHECK(cuMemAllocHost(reinterpret_cast<void**>(&host), shared.size));
  std::fill(host, host + words, kUnread);
  CU_CHECK(cuStreamWaitEvent(stream, ready, 0));
  CU_CHECK(cuMemcpyDtoHAsync(host, shared.ptr, shared.size, stream));
  CU_CHECK(cuEventRecord(copied, stream));
  const CUresult early = cuEventQuery(copied);
  const uint32_t earlyWord = host[0];
  kids.producer.send(note("open"));
  CU_CHECK(cuEventSynchronize(copied));
  //! [consumer]
  //! [consumer-report]
  const Note opened = hear(kids.producer, "the producer", "opened");
  const size_t fresh = static_cast<size_t>(std::count(host, host + words, kFresh));
  const size_t stale = static_cast<size_t>(std::count(host, host + words, kStale));
  CU_CHECK(cuEventDestroy(ready));  // the consumer's event first: the producer destroys its own after
  CU_CHECK(cuEventDestroy(copied));
  CU_CHECK(cuStreamDestroy(stream));
  CU_CHECK(cuMemFreeHost(host));
  wb::unmap(shared);
  kids.producer.send(note("done"));
  const wb::ProcessEnd& end = kids.producer.end();
  std::printf(
      "the producer: its stream held by a gate, behind it cuMemsetD32Async of 0x%X over a buffer that "
      "held 0x%X, then cuEventRecord of an interprocess event; handle and descriptor sent\n",
      kFresh, kStale);
  std::printf("this process: cuIpcOpenEventHandle, cuStreamWaitEvent, cuMemcpyDtoHAsync into pinned memory\n"
              "  then cuEventQuery after the copy: %s; the host buffer's first word: 0x%X\n",
              wb::errorName(early).c_str(), earlyWord);
  std::printf(
      "told the producer to open its gate; after cuEventSynchronize: %zu of %zu words are 0x%X, %zu the "
      "stale 0x%X\n",
      fresh, words, kFresh, stale, kStale);
  std::printf("the producer's gate was %s when told to open; %s\n",
              opened.v[0] == wb::Gate::Waiting ? "still waiting" : "NOT waiting", howItEnded(end).c_str());
  wb::expect(early == CUDA_ERROR_NOT_READY && earlyWord == kUnread && opened.v[0] == wb::Gate::Waiting,
             "the copy waiting for the producer's event",
             wb::errorName(early) + ", first word " + wb::hex(earlyWord));
  wb::expect(fresh == words && end.code == 0,
             "the producer's data, never the stale data, once the gate opened",
             std::to_string(fresh) + " words fresh, " + std::to_string(stale) + " stale");
}
//! [consumer-report]

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  try {
    if (args.size() == 2 && args[0] == "--child" && args[1] == "producer") {
      const int channel = wb::channelFromParent();
      try {
        if (channel >= 0) return childProducer(channel);
      } catch (const Quit&) {
        return wb::kExitOk;
      }
    }
    if (!args.empty()) {
      std::fprintf(stderr, "usage: %s (or --child producer with WORKBOOK_CHANNEL set)\n", argv[0]);
      return wb::kExitUsage;
    }
    wb::checkEnvironment({
        {"CUDA_LAUNCH_BLOCKING", wb::Under::Controls,
         "its child runs without it: its gate kernel must leave its stream busy"},
    });
    // The image is checked before the child starts: a damaged one stops the program here, once.
    wb::verifiedImagePath("streams.fatbin");  // the producer's
    // Under compute-sanitizer (the sanitize target sets WORKBOOK_UNDER_SANITIZER) the step, whose
    // copy must wait beside another process's waiting kernel, is left out and says so.
    const bool sanitized = wb::underSanitizer();
    {
      Children kids;  // the producer starts now, side by side with this process's own start-up
      CU_CHECK(cuInit(0));
      CUdevice dev0 = 0;
      CU_CHECK(cuDeviceGet(&dev0, 0));
      wb::expectSeveralProcesses(dev0);  // or stops, naming the mode
      const std::string noFd = wb::fdSharingMissing(dev0);
      Primary primary;
      hear(kids.producer, "the producer", "ready");
      wb::step(5, "Ordering another process's work: interprocess events");
      if (!noFd.empty()) {
        std::printf("skipped: %s (the producer's buffer is shared that way)\n", noFd.c_str());
        kids.producer.send(note("quit"));
      } else if (sanitized) {
        std::printf(
            "left out under compute-sanitizer: this process's work must run beside another's waiting kernel\n");
        kids.producer.send(note("quit"));
      } else {
        interprocessEvent(kids, primary.dev);
      }
    }
    return wb::kExitOk;
  } catch (...) {
    return wb::reportFatal(std::current_exception());
  }
}
