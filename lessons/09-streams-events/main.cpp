// Lesson 09: streams and events.
//
// What you learn: a stream is an ordered queue of work on a device and an event is a marker in
// one. Work is made to stay pending on purpose by a gate kernel (kernels/streams.cu) that waits
// until the host opens it, so every claim here is shown without sleeping. cuStreamQuery and
// cuEventQuery return CUDA_ERROR_NOT_READY while work is pending. cuMemcpyHtoDAsync from pinned
// memory only enqueues the copy; from pageable memory the reference says it "might be synchronous",
// and the program shows what this driver did. Two streams overlap a copy with a kernel, measured
// against the sum and the larger of the two. cuStreamWaitEvent orders work across streams. The
// legacy default stream waits for blocking streams, the per-thread default stream among them, and
// not for a CU_STREAM_NON_BLOCKING stream; CU_STREAM_PER_THREAD gives each thread its own default
// stream. Then priorities, host functions in a stream, event timing against the wall clock, and
// what destroying a stream with pending work does.
//
// APIs: cuStreamCreate, cuStreamCreateWithPriority, cuStreamQuery, cuStreamSynchronize,
//       cuStreamWaitEvent, cuStreamDestroy, cuStreamGetPriority, cuCtxGetStreamPriorityRange,
//       cuEventCreate, cuEventRecord, cuEventQuery, cuEventSynchronize, cuEventElapsedTime,
//       cuMemcpyHtoDAsync, cuMemHostAlloc, cuLaunchHostFunc, cuLaunchKernel (and the stream handles
//       CU_STREAM_LEGACY and CU_STREAM_PER_THREAD)
// Run:  ctest -R lesson09   (or build/lessons/lesson09-streams-events)
#include "gate.hpp"
#include "workbook.hpp"

#include <algorithm>
#include <cstdlib>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <future>
#include <thread>
#include <vector>

using Kernels = wb::StreamKernels;  // gate, stamp and burn, loaded into the context (common/gate.hpp)

// What cuStreamQuery and cuEventQuery answered, in words.
const char* status(CUresult rc) {
  if (rc == CUDA_SUCCESS) return "CUDA_SUCCESS (done)";
  return rc == CUDA_ERROR_NOT_READY ? "CUDA_ERROR_NOT_READY (pending)" : "an error";
}

float elapsedMs(CUevent start, CUevent stop) {
  float ms = 0;
  CU_CHECK(cuEventElapsedTime(&ms, start, stop));
  return ms;
}

//! [queue]
// A stream runs its work in order. While the gate kernel waits, everything queued behind it waits
// too, and the queries say so; once the host opens the gate, the queue drains.
void streamIsAQueue(const Kernels& k) {
  CUstream stream = nullptr;
  CU_CHECK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  CUevent after = nullptr;
  CU_CHECK(cuEventCreate(&after, CU_EVENT_DEFAULT));
  {
    wb::Gate gate(k.gate, stream);
    CU_CHECK(cuEventRecord(after, stream));  // a marker behind the gate
    const CUresult streamClosed = cuStreamQuery(stream), eventClosed = cuEventQuery(after);
    std::printf("gate closed: cuStreamQuery %s, cuEventQuery %s\n", status(streamClosed),
                status(eventClosed));
    wb::expect(streamClosed == CUDA_ERROR_NOT_READY && eventClosed == CUDA_ERROR_NOT_READY,
               "the stream and the event pending behind the closed gate", "a query said done");
    gate.open();
    CU_CHECK(cuEventSynchronize(after));
    const CUresult streamOpen = cuStreamQuery(stream), eventOpen = cuEventQuery(after);
    const bool released = gate.outcome() == wb::Gate::Released;
    std::printf("gate opened, event waited for: cuStreamQuery %s, cuEventQuery %s, the kernel says %s\n",
                status(streamOpen), status(eventOpen), released ? "released" : "NOT released");
    wb::expect(streamOpen == CUDA_SUCCESS && eventOpen == CUDA_SUCCESS && released,
               "the queue drained once the host opened the gate",
               "a query still pending, or the gate timed out");
  }
  CU_CHECK(cuEventDestroy(after));
  CU_CHECK(cuStreamDestroy(stream));
}
//! [queue]

// The first n floats of device memory, read back.
std::vector<float> readBack(CUdeviceptr p, size_t n) {
  std::vector<float> v(n);
  CU_CHECK(cuMemcpyDtoH(v.data(), p, n * sizeof(float)));
  return v;
}

//! [pinned]
// The same asynchronous copy from pinned and from pageable memory. Each source holds 1.0f when the
// call is made and 2.0f right after it returns; what arrives shows when the copy read its source.
void asyncNeedsPinned(const Kernels& k) {
  constexpr size_t n = 16384;  // 64 KiB
  CUstream stream = nullptr;
  CU_CHECK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  CUdeviceptr dst = 0;
  CU_CHECK(cuMemAlloc(&dst, n * sizeof(float)));
  float* pinned = nullptr;
  CU_CHECK(cuMemAllocHost(reinterpret_cast<void**>(&pinned), n * sizeof(float)));
  std::vector<float> pageable(n);

  std::fill(pinned, pinned + n, 1.0f);
  {
    wb::Gate gate(k.gate, stream);  // the copy cannot start before the gate opens
    CU_CHECK(cuMemcpyHtoDAsync(dst, pinned, n * sizeof(float), stream));
    std::fill(pinned, pinned + n, 2.0f);  // the call has returned; the copy has not run yet
    gate.open();
    CU_CHECK(cuStreamSynchronize(stream));
  }
  const float fromPinned = readBack(dst, 1)[0];
  std::printf("from pinned memory:   the device got %.1f: the copy read the source when it ran\n",
              fromPinned);
  wb::expect(fromPinned == 2.0f, "the pinned copy reading its source when it ran (2.0)",
             "the device got " + std::to_string(fromPinned));
  //! [pinned]

  //! [pageable]

  // The reference promises nothing here ("might be synchronous"): the run only reports what this
  // driver did, and the page advises against relying on either answer.
  std::fill(pageable.begin(), pageable.end(), 1.0f);
  CU_CHECK(cuMemcpyHtoDAsync(dst, pageable.data(), n * sizeof(float), stream));
  std::fill(pageable.begin(), pageable.end(), 2.0f);
  CU_CHECK(cuStreamSynchronize(stream));
  const float fromPageable = readBack(dst, 1)[0];
  std::printf("from pageable memory: the device got %.1f: %s\n", fromPageable,
              fromPageable == 1.0f   ? "this driver had read the source before the call returned"
              : fromPageable == 2.0f ? "this driver read the source after the call returned"
                                     : "neither value: the copy raced with the write");
  CU_CHECK(cuMemFreeHost(pinned));
  CU_CHECK(cuMemFree(dst));
  CU_CHECK(cuStreamDestroy(stream));
}
//! [pageable]

//! [calibrate]
// How many rounds of burn take about targetMs: trial launches, each scaling the rounds by how far
// the last one missed, until one lands within 5% (a fixed launch cost makes one scaling too few).
unsigned roundsLasting(const Kernels& k, CUstream s, CUdeviceptr data, unsigned n, float targetMs) {
  CUevent start = nullptr, stop = nullptr;
  CU_CHECK(cuEventCreate(&start, CU_EVENT_DEFAULT));
  CU_CHECK(cuEventCreate(&stop, CU_EVENT_DEFAULT));
  unsigned rounds = 256;
  void* args[] = {&data, &n, &rounds};
  for (int trial = 0; trial < 4; ++trial) {
    CU_CHECK(cuEventRecord(start, s));
    CU_CHECK(cuLaunchKernel(k.burn, 264, 1, 1, 256, 1, 1, 0, s, args, nullptr));
    CU_CHECK(cuEventRecord(stop, s));
    CU_CHECK(cuEventSynchronize(stop));
    const float ms = std::max(elapsedMs(start, stop), 0.001f);
    if (ms > 0.95f * targetMs && ms < 1.05f * targetMs) break;
    rounds = std::max(1u, static_cast<unsigned>(rounds * targetMs / ms));
  }
  CU_CHECK(cuEventDestroy(start));
  CU_CHECK(cuEventDestroy(stop));
  return rounds;
}
//! [calibrate]

struct Overlap {
  float copyMs, kernelMs, bothMs;
};

//! [overlap-setup]
// A 256 MiB copy in one stream and a kernel of about the same length in another: each alone, then
// both at once, both starting from one event so they are enqueued together.
Overlap overlapCopyAndKernel(const Kernels& k) {
  const size_t bytes = 256u << 20;
  unsigned n = 1u << 22;
  CUstream copies = nullptr, compute = nullptr;
  CU_CHECK(cuStreamCreate(&copies, CU_STREAM_NON_BLOCKING));
  CU_CHECK(cuStreamCreate(&compute, CU_STREAM_NON_BLOCKING));
  void* host = nullptr;
  CU_CHECK(cuMemAllocHost(&host, bytes));
  std::memset(host, 0, bytes);
  CUdeviceptr target = 0, data = 0;
  CU_CHECK(cuMemAlloc(&target, bytes));
  CU_CHECK(cuMemAlloc(&data, n * sizeof(float)));
  CU_CHECK(cuMemsetD32Async(data, 0, n, compute));  // in compute, which would not wait for the legacy stream
  CUevent e[4];
  for (CUevent& ev : e) CU_CHECK(cuEventCreate(&ev, CU_EVENT_DEFAULT));
  //! [overlap-setup]

  //! [overlap-parts]
  const auto copy = [&] { CU_CHECK(cuMemcpyHtoDAsync(target, host, bytes, copies)); };
  const auto timeAlone = [&](CUstream s, auto&& work) {
    CU_CHECK(cuEventRecord(e[0], s));
    work();
    CU_CHECK(cuEventRecord(e[1], s));
    CU_CHECK(cuEventSynchronize(e[1]));
    return elapsedMs(e[0], e[1]);
  };
  timeAlone(copies, copy);  // warm-up: first-use costs stay out of the figures
  const float copyMs = timeAlone(copies, copy);
  unsigned rounds = roundsLasting(k, compute, data, n, copyMs);
  void* args[] = {&data, &n, &rounds};
  const auto burn = [&] {
    CU_CHECK(cuLaunchKernel(k.burn, 264, 1, 1, 256, 1, 1, 0, compute, args, nullptr));
  };
  const float kernelMs = timeAlone(compute, burn);
  //! [overlap-parts]

  //! [overlap]
  CU_CHECK(cuEventRecord(e[0], copies));       // one start for both streams
  CU_CHECK(cuStreamWaitEvent(compute, e[0], 0));
  copy();
  burn();
  CU_CHECK(cuEventRecord(e[2], compute));
  CU_CHECK(cuStreamWaitEvent(copies, e[2], 0));  // the end waits for both
  CU_CHECK(cuEventRecord(e[1], copies));
  CU_CHECK(cuEventSynchronize(e[1]));
  const Overlap o{copyMs, kernelMs, elapsedMs(e[0], e[1])};
  //! [overlap]

  for (CUevent ev : e) CU_CHECK(cuEventDestroy(ev));
  CU_CHECK(cuMemFree(data));
  CU_CHECK(cuMemFree(target));
  CU_CHECK(cuMemFreeHost(host));
  CU_CHECK(cuStreamDestroy(copies));
  CU_CHECK(cuStreamDestroy(compute));
  return o;
}

void reportOverlap(const Overlap& o) {
  const float sum = o.copyMs + o.kernelMs, ideal = std::max(o.copyMs, o.kernelMs);
  std::printf("copy alone %.2f ms, kernel alone %.2f ms: in sequence %.2f ms, perfectly overlapped %.2f ms\n",
              o.copyMs, o.kernelMs, sum, ideal);
  std::printf("both at once, in two streams: %.2f ms, %.3f of the ideal (the larger part alone over the whole)\n",
              o.bothMs, ideal / o.bothMs);
  // Overlap, not noise: together they must save at least a quarter of the shorter part.
  wb::expect(o.bothMs < sum - 0.25f * std::min(o.copyMs, o.kernelMs),
             "the copy and the kernel overlapping (together clearly faster than in sequence)",
             "together they took nearly as long as one after the other");
}

// One stamp into a slot, in a stream, followed by an event; returns the event.
CUevent stampIn(const Kernels& k, wb::PinnedWords& stamps, size_t slot, CUstream s) {
  CUdeviceptr counter = stamps.device(0), where = stamps.device(slot);
  void* args[] = {&counter, &where};
  CU_CHECK(cuLaunchKernel(k.stamp, 1, 1, 1, 1, 1, 1, 0, s, args, nullptr));
  CUevent done = nullptr;
  CU_CHECK(cuEventCreate(&done, CU_EVENT_DISABLE_TIMING));
  CU_CHECK(cuEventRecord(done, s));
  return done;
}

//! [wait-event]
// Stream B waits for an event recorded in A behind the gate. Stream C, independent of both, runs
// a stamp to completion while the gate is closed; B's stamp must not have run by then.
void waitEvent(const Kernels& k, wb::PinnedWords& stamps) {
  CUstream a = nullptr, b = nullptr, c = nullptr;
  for (CUstream* s : {&a, &b, &c}) CU_CHECK(cuStreamCreate(s, CU_STREAM_NON_BLOCKING));
  CUevent afterGate = nullptr;
  CU_CHECK(cuEventCreate(&afterGate, CU_EVENT_DISABLE_TIMING));
  {
    wb::Gate gate(k.gate, a);
    CU_CHECK(cuEventRecord(afterGate, a));
    CU_CHECK(cuStreamWaitEvent(b, afterGate, 0));
    const CUevent stampedB = stampIn(k, stamps, 1, b);
    const CUevent stampedC = stampIn(k, stamps, 2, c);
    CU_CHECK(cuEventSynchronize(stampedC));
    const unsigned bClosed = stamps.read(1);
    std::printf("gate closed: C's stamp ran (order %u); B, waiting on A's event, ran: %s "
                "(cuStreamQuery %s)\n",
                stamps.read(2), bClosed ? "yes" : "no", status(cuStreamQuery(b)));
    wb::expect(bClosed == 0, "B waiting for A's event while C ran", "B's stamp ran before the gate opened");
    gate.open();
    CU_CHECK(cuEventSynchronize(stampedB));
    std::printf("gate opened: B's stamp ran (order %u)\n", stamps.read(1));
    wb::expect(stamps.read(1) > stamps.read(2), "B's stamp after C's", "B's stamp came first");
    CU_CHECK(cuEventDestroy(stampedB));
    CU_CHECK(cuEventDestroy(stampedC));
  }
  CU_CHECK(cuEventDestroy(afterGate));
  for (CUstream s : {a, b, c}) CU_CHECK(cuStreamDestroy(s));
}
//! [wait-event]

//! [legacy]
// Work on the legacy default stream (the NULL stream) waits for every blocking stream, and a
// blocking stream's later work waits for it. A non-blocking stream C serves as the control: its
// stamp runs to completion while the gate is closed, so the GPU was free to run the NULL-stream
// stamp too, had the NULL stream not been waiting.
void legacyStream(const Kernels& k, wb::PinnedWords& stamps, unsigned flags, const char* kind) {
  CUstream gated = nullptr, control = nullptr;
  CU_CHECK(cuStreamCreate(&gated, flags));
  CU_CHECK(cuStreamCreate(&control, CU_STREAM_NON_BLOCKING));
  for (size_t i = 0; i < 3; ++i) stamps.write(i, 0);
  {
    wb::Gate gate(k.gate, gated);
    CUevent onNull = stampIn(k, stamps, 1, nullptr);  // nullptr: the legacy default stream
    CUevent onControl = stampIn(k, stamps, 2, control);
    CU_CHECK(cuEventSynchronize(onControl));
    const bool nullRan = stamps.read(1) != 0;
    std::printf("%s stream gated: the control stamp ran; the NULL-stream stamp ran: %s\n", kind,
                nullRan ? "yes" : "no");
    // The legacy stream waits for blocking streams only.
    const bool blocking = flags != CU_STREAM_NON_BLOCKING;
    wb::expect(nullRan != blocking,
               std::string("the NULL-stream stamp ") + (blocking ? "waiting for" : "not waiting for") +
                   " " + kind + " stream",
               nullRan ? "it ran while the gate was closed" : "it waited for the gate");
    gate.open();
    CU_CHECK(cuEventSynchronize(onNull));
    CU_CHECK(cuEventDestroy(onNull));
    CU_CHECK(cuEventDestroy(onControl));
  }
  CU_CHECK(cuStreamDestroy(gated));
  CU_CHECK(cuStreamDestroy(control));
}
//! [legacy]

//! [per-thread-legacy]
// The per-thread default stream is a blocking stream: the reference says it "will synchronize with
// the legacy default stream if both are used in a program". This thread's per-thread default
// stream is gated; a stamp goes to the legacy stream, named explicitly by CU_STREAM_LEGACY (which
// means the legacy stream whatever the compilation unit's default-stream mode), beside a
// non-blocking control stream.
void perThreadAndLegacy(const Kernels& k, wb::PinnedWords& stamps) {
  CUstream control = nullptr;
  CU_CHECK(cuStreamCreate(&control, CU_STREAM_NON_BLOCKING));
  for (size_t i = 0; i < 3; ++i) stamps.write(i, 0);
  {
    wb::Gate gate(k.gate, CU_STREAM_PER_THREAD);
    CUevent onLegacy = stampIn(k, stamps, 1, CU_STREAM_LEGACY);
    CUevent onControl = stampIn(k, stamps, 2, control);
    CU_CHECK(cuEventSynchronize(onControl));
    const bool legacyRan = stamps.read(1) != 0;
    std::printf("this thread's per-thread default stream gated: the control stamp ran; "
                "the CU_STREAM_LEGACY stamp ran: %s\n", legacyRan ? "yes" : "no");
    wb::expect(!legacyRan, "the legacy stream's stamp waiting for the per-thread default stream",
               "it ran while the gate was closed");
    gate.open();
    CU_CHECK(cuEventSynchronize(onLegacy));
    CU_CHECK(cuEventDestroy(onLegacy));
    CU_CHECK(cuEventDestroy(onControl));
  }
  CU_CHECK(cuStreamDestroy(control));
}
//! [per-thread-legacy]

//! [per-thread]
// CU_STREAM_PER_THREAD names the calling thread's own default stream. Per-thread default streams do
// not synchronise with each other (only with the legacy stream). Thread 1 gates its own;
// thread 2's stamp on its own default stream completes meanwhile. Each thread hands the other a
// promise, kept even when it fails, so neither can wait forever.
void perThreadStreams(const Kernels& k, wb::PinnedWords& stamps, CUcontext ctx) {
  stamps.write(1, 0);
  std::promise<bool> gated, stamped;
  std::thread first([&] {
    bool told = false;
    try {
      CU_CHECK(cuCtxSetCurrent(ctx));  // a new thread has no current context (lesson 03)
      wb::Gate gate(k.gate, CU_STREAM_PER_THREAD);
      gated.set_value(true);
      told = true;
      stamped.get_future().wait();  // thread 2 is done: the gate may open
      gate.open();
      CU_CHECK(cuStreamSynchronize(CU_STREAM_PER_THREAD));
    } catch (const wb::DriverError& e) {
      std::printf("thread 1 failed: %s\n", e.what());
      if (!told) gated.set_value(false);
    }
  });
  //! [per-thread]
  //! [per-thread-2]
  std::thread second([&] {
    try {
      CU_CHECK(cuCtxSetCurrent(ctx));
      if (gated.get_future().get()) {
        CUevent done = stampIn(k, stamps, 1, CU_STREAM_PER_THREAD);
        CU_CHECK(cuEventSynchronize(done));
        CU_CHECK(cuEventDestroy(done));
      }
    } catch (const wb::DriverError& e) {
      std::printf("thread 2 failed: %s\n", e.what());
    }
    stamped.set_value(true);
  });
  second.join();
  first.join();
  std::printf("thread 1's default stream gated; thread 2's stamp on its own default stream ran: %s\n",
              stamps.read(1) ? "yes" : "no");
  wb::expect(stamps.read(1) != 0, "thread 2's default stream independent of thread 1's",
             "thread 2's stamp waited for thread 1's gate");
}
//! [per-thread-2]

//! [priorities]
// Lower numbers are higher priorities; the range is the device's. A priority outside it is clamped.
void priorities() {
  int least = 0, greatest = 0;
  CU_CHECK(cuCtxGetStreamPriorityRange(&least, &greatest));
  std::printf("stream priorities run from %d (least) to %d (greatest)\n", least, greatest);
  for (int asked : {greatest, least, greatest - 10}) {
    CUstream s = nullptr;
    CU_CHECK(cuStreamCreateWithPriority(&s, CU_STREAM_NON_BLOCKING, asked));
    int got = 0;
    CU_CHECK(cuStreamGetPriority(s, &got));
    std::printf("  asked for %d, cuStreamGetPriority says %d\n", asked, got);
    CU_CHECK(cuStreamDestroy(s));
  }
}
//! [priorities]

//! [host-func]
// A host function runs when the stream reaches it, after the work before it, and the work after it
// waits for it. It must not call CUDA, and it is not called at all once the context has had an
// error: whoever waits for it needs a time limit. Here it only sets a flag.
void CUDA_CB markDone(void* flag) { static_cast<std::atomic<bool>*>(flag)->store(true); }

void hostFunction(const Kernels& k) {
  CUstream s = nullptr;
  CU_CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  std::atomic<bool> ran{false};
  {
    wb::Gate gate(k.gate, s);
    CU_CHECK(cuLaunchHostFunc(s, markDone, &ran));
    const bool early = ran.load();
    std::printf("gate closed: the host function has run: %s\n", early ? "yes" : "no");
    wb::expect(!early, "the host function waiting behind the gate", "it had run before the gate opened");
    gate.open();
    CU_CHECK(cuStreamSynchronize(s));
  }
  std::printf("gate opened and stream synchronised: the host function has run: %s\n",
              ran.load() ? "yes" : "no");
  wb::expect(ran.load(), "the host function run once the stream drained", "it had not run");
  CU_CHECK(cuStreamDestroy(s));
}
//! [host-func]

//! [timing]
// Events time the GPU's work between two points of a stream; a host clock around the same work
// also counts the launch and the wait, so it can only be longer.
void eventTiming(const Kernels& k) {
  CUstream s = nullptr;
  CU_CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  unsigned n = 1u << 20;
  CUdeviceptr data = 0;
  CU_CHECK(cuMemAlloc(&data, n * sizeof(float)));
  CU_CHECK(cuMemsetD32Async(data, 0, n, s));
  unsigned rounds = roundsLasting(k, s, data, n, 20.0f);
  void* args[] = {&data, &n, &rounds};
  CUevent start = nullptr, stop = nullptr, untimed = nullptr;
  CU_CHECK(cuEventCreate(&start, CU_EVENT_DEFAULT));
  CU_CHECK(cuEventCreate(&stop, CU_EVENT_DEFAULT));
  CU_CHECK(cuEventCreate(&untimed, CU_EVENT_DISABLE_TIMING));
  wb::Stopwatch wall;
  CU_CHECK(cuEventRecord(start, s));
  CU_CHECK(cuLaunchKernel(k.burn, 264, 1, 1, 256, 1, 1, 0, s, args, nullptr));
  CU_CHECK(cuEventRecord(stop, s));
  CU_CHECK(cuEventRecord(untimed, s));
  float ms = 0;
  const CUresult early = cuEventElapsedTime(&ms, start, stop);  // the kernel is still running
  CU_CHECK(cuEventSynchronize(stop));
  const double wallMs = wall.ms();
  std::printf("cuEventElapsedTime before the kernel ended: %s\n", wb::errorName(early).c_str());
  wb::expect(early == CUDA_ERROR_NOT_READY, "cuEventElapsedTime refusing an event not yet reached",
             "it returned " + wb::errorName(early));
  const float byEvents = elapsedMs(start, stop);
  std::printf("the kernel: %.3f ms by events, %.3f ms by the host's clock around launch and wait\n",
              byEvents, wallMs);
  wb::expect(byEvents <= wallMs, "the events' time within the host's", "the events measured longer");
  //! [timing]
  //! [timing-errors]
  const CUresult noTiming = cuEventElapsedTime(&ms, start, untimed);
  std::printf("an event created with CU_EVENT_DISABLE_TIMING: %s\n", wb::errorName(noTiming).c_str());
  wb::expect(noTiming == CUDA_ERROR_INVALID_HANDLE, "cuEventElapsedTime refusing an event without timing",
             "it returned " + wb::errorName(noTiming));
  for (CUevent e : {start, stop, untimed}) CU_CHECK(cuEventDestroy(e));
  CU_CHECK(cuMemFree(data));
  CU_CHECK(cuStreamDestroy(s));
}
//! [timing-errors]

//! [destroy]
// cuStreamDestroy with work still pending returns at once; the work completes afterwards, and
// the stream's resources are released then.
void destroyPending(const Kernels& k) {
  CUstream s = nullptr;
  CU_CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  CUevent after = nullptr;
  CU_CHECK(cuEventCreate(&after, CU_EVENT_DISABLE_TIMING));
  wb::Gate gate(k.gate, s);
  CU_CHECK(cuEventRecord(after, s));
  const CUresult rc = cuStreamDestroy(s);
  const bool waiting = gate.outcome() == wb::Gate::Waiting;
  std::printf("cuStreamDestroy with the gate closed: %s, and the gate kernel is still %s\n",
              wb::errorName(rc).c_str(), waiting ? "waiting" : "NOT waiting");
  wb::expect(rc == CUDA_SUCCESS && waiting, "cuStreamDestroy returning at once with its work pending",
             wb::errorName(rc) + (waiting ? "" : ", and the gate kernel had ended"));
  gate.open();
  CU_CHECK(cuEventSynchronize(after));
  const CUresult completed = cuEventQuery(after);
  std::printf("gate opened: the event behind it completed: %s\n", status(completed));
  wb::expect(completed == CUDA_SUCCESS, "the destroyed stream's work completing", status(completed));
  CU_CHECK(cuEventDestroy(after));
}
//! [destroy]

int main() {
  try {
    wb::checkEnvironment({
        {"CUDA_LAUNCH_BLOCKING", wb::Under::Stops,
         "every launch would wait for its kernel: the gate kernel's launch would wait for the gate, and nothing is ever pending"},
        {"CUDA_DEVICE_MAX_CONNECTIONS", wb::Under::Stops,
         "streams would share work queues, so a stream's work could wait behind another's gate (false dependencies)",
         wb::belowDefault},
    });
    // The image is checked before the driver starts: a damaged one stops the program in a moment.
    const std::string image = wb::verifiedImagePath("streams.fatbin");
    CU_CHECK(cuInit(0));
    CUdevice dev = 0;
    CU_CHECK(cuDeviceGet(&dev, 0));
    CUcontext primary = nullptr;
    CU_CHECK(cuDevicePrimaryCtxRetain(&primary, dev));
    CU_CHECK(cuCtxSetCurrent(primary));
    CUlibrary library = nullptr;
    CU_CHECK(cuLibraryLoadFromFile(&library, image.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0));
    const Kernels k = Kernels::load(library);  // every kernel loaded before any gate closes
    {
      wb::PinnedWords stamps(4);  // [0] the stamp counter, [1..3] slots
      wb::step(1, "A stream is a queue");
      streamIsAQueue(k);
      wb::step(2, "Asynchronous copies need pinned memory");
      asyncNeedsPinned(k);
      // Under compute-sanitizer (the sanitize target sets WORKBOOK_UNDER_SANITIZER), on driver 580,
      // kernels ran one at a time and cuStreamDestroy waited for the gate: steps 3 and 9 could not
      // show what they teach there, so they say so instead of narrating it.
      const bool sanitized = wb::underSanitizer();
      const char* leftOut = "left out under compute-sanitizer, which runs one kernel at a time\n";
      wb::step(3, "Overlapping a copy with a kernel");
      if (sanitized)
        std::printf("%s", leftOut);
      else
        reportOverlap(overlapCopyAndKernel(k));
      wb::step(4, "cuStreamWaitEvent orders work across streams");
      waitEvent(k, stamps);
      wb::step(5, "The default streams");
      legacyStream(k, stamps, CU_STREAM_DEFAULT, "a blocking");
      legacyStream(k, stamps, CU_STREAM_NON_BLOCKING, "a CU_STREAM_NON_BLOCKING");
      perThreadAndLegacy(k, stamps);
      perThreadStreams(k, stamps, primary);
      wb::step(6, "Priorities");
      priorities();
      wb::step(7, "Host functions in a stream");
      hostFunction(k);
      wb::step(8, "Events against the wall clock");
      eventTiming(k);
      wb::step(9, "Destroying a stream with work pending");
      if (sanitized)
        std::printf("%s", leftOut);
      else
        destroyPending(k);
    }
    CU_CHECK(cuLibraryUnload(library));
    CU_CHECK(cuCtxSetCurrent(nullptr));
    CU_CHECK(cuDevicePrimaryCtxRelease(dev));
    return wb::kExitOk;
  } catch (...) {
    return wb::reportFatal(std::current_exception());
  }
}
