// The checks of lesson 28's exercises (lessons/28-launch-attributes/exercises.cpp). What a stream or a
// launch was given is read back from the driver (cuStreamGetPriority, cuStreamGetFlags,
// cuStreamGetAttribute, a captured graph's edge data and node parameters) or seen on the way in (the
// value cuCtxSetLimit was asked for): no timing decides anything, since every attribute here is a
// hint whose effect in time the reference does not promise. Failure paths use the ledger's FailCall
// (tests/exercises/ledger.hpp). Each case's name begins with the requirements it verifies.
#include "check.hpp"
#include "gate.hpp"
#include "28-launch-attributes/exercises.hpp"
#include "graph_handles.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

// cuStreamSetAttribute through the ledger, so that a check can make it fail.
WBX_INTERPOSE(cuStreamSetAttribute, (CUstream s, CUstreamAttrID attr, const CUstreamAttrValue* value),
              (s, attr, value))

// cuCtxSetLimit through the ledger too, noting the last persisting-L2 size asked for: the value read
// back afterwards may be clamped or rounded by the driver, the value asked is the code's own.
namespace {

using wbt::Graph;
long long lastPersistingAsk = -1;
}
extern "C" CUresult CUDAAPI cuCtxSetLimit(CUlimit limit, size_t value) {
  using Real = CUresult(CUDAAPI*)(CUlimit, size_t);
  static const Real real = reinterpret_cast<Real>(::wbx::detail::real("cuCtxSetLimit"));
  if (const CUresult injected = ::wbx::detail::enter("cuCtxSetLimit")) return injected;
  if (limit == CU_LIMIT_PERSISTING_L2_CACHE_SIZE) lastPersistingAsk = static_cast<long long>(value);
  return real ? real(limit, value) : CUDA_ERROR_NOT_FOUND;
}

namespace {

using wbt::functionOf;
using wbt::Stream;

// The primary context of device 0, current, and the kernels the checks launch, each loaded (and run
// once) before any gate closes (lesson 09).
struct Lab {
  wbt::RetainedPrimary primary{(wbt::initDriver(), wbt::device(0))};
  wbt::Pushed current{primary.get()};
  CUlibrary streams = nullptr, attrs = nullptr;
  CUfunction gate = nullptr, probe = nullptr;
  Lab() {
    CU_CHECK(cuLibraryLoadFromFile(&streams, wb::verifiedImagePath("streams.fatbin").c_str(), nullptr, nullptr, 0,
                                   nullptr, nullptr, 0));
    CU_CHECK(cuLibraryLoadFromFile(&attrs, wb::verifiedImagePath("launch_attributes.fatbin").c_str(), nullptr,
                                   nullptr, 0, nullptr, nullptr, 0));
    wb::StreamKernels::load(streams);
    gate = functionOf(streams, "gate");
    probe = functionOf(attrs, "probe");
    wbt::DeviceBuffer scratch(16);
    CUdeviceptr began = scratch.get(), ran = scratch.get() + 8;
    void* args[] = {&began, &ran};
    CU_CHECK(cuLaunchKernel(probe, 1, 1, 1, 1, 1, 1, 0, nullptr, args, nullptr));
    CU_CHECK(cuCtxSynchronize());
  }
  ~Lab() {
    cuLibraryUnload(attrs);
    cuLibraryUnload(streams);
  }
};

// The probe's arguments: when it began and how often it ran.
struct ProbeArgs {
  wbt::DeviceBuffer words{16};
  CUdeviceptr began = words.get(), ran = words.get() + 8;
  void* args[2] = {&began, &ran};
  ProbeArgs() { wbt::setWords(words.get(), 0, 4); }
  unsigned runs() const {
    unsigned n = 0;
    CU_CHECK(cuMemcpyDtoH(&n, ran, sizeof n));
    return n;
  }
};

struct Event {
  CUevent e = nullptr;
  Event() { CU_CHECK(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING)); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  ~Event() { cuEventDestroy(e); }
};


// Ends a capture the check began (the code under check may have thrown in its middle).
void endOwnCapture(CUstream s, Graph& out) {
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  if (cuStreamIsCapturing(s, &status) == CUDA_SUCCESS && status != CU_STREAM_CAPTURE_STATUS_NONE)
    cuStreamEndCapture(s, &out.g);
}

int deviceAttribute(CUdevice_attribute a) { return wbt::attribute(wbt::device(0), a); }

// Destroys the streams the code under check returned.
void destroy(const ex28::ServingStreams& s) {
  if (s.latency) cuStreamDestroy(s.latency);
  if (s.batch) cuStreamDestroy(s.batch);
}

// Puts the context's persisting set-aside and L2 lines back as they were.
struct SetAsideKept {
  size_t before = 0;
  SetAsideKept() { CU_CHECK(cuCtxGetLimit(&before, CU_LIMIT_PERSISTING_L2_CACHE_SIZE)); }
  SetAsideKept(const SetAsideKept&) = delete;
  SetAsideKept& operator=(const SetAsideKept&) = delete;
  ~SetAsideKept() {
    cuCtxResetPersistingL2Cache();
    cuCtxSetLimit(CU_LIMIT_PERSISTING_L2_CACHE_SIZE, before);
  }
};

void needPersistingL2() {
  if (deviceAttribute(CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE) <= 0)
    throw wbx::Skipped("device 0 reports no persisting L2 (MAX_PERSISTING_L2_CACHE_SIZE 0): compute capability 8.0 "
                       "and newer have one");
}

void needCompletionEvent() {
#if CUDA_VERSION < 12030
  throw wbx::Skipped("built with CUDA " + std::to_string(CUDA_VERSION) +
                     ": the launch completion event and edge data need 12.3 or newer");
#endif
}

// What persistHot should have done for `bytes`, and what it did: the check's own computation from the
// device's attributes, against the value asked of cuCtxSetLimit and the window read back.
void checkPersisted(const Lab&, size_t bytes) {
  const size_t maxPersisting = static_cast<size_t>(deviceAttribute(CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE));
  const size_t maxWindow = static_cast<size_t>(deviceAttribute(CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE));
  SetAsideKept kept;
  wbt::DeviceBuffer hot(bytes);
  Stream s;
  lastPersistingAsk = -1;
  const size_t returned = ex28::persistHot(s.get(), hot.get(), bytes);
  size_t reported = 0;
  CU_CHECK(cuCtxGetLimit(&reported, CU_LIMIT_PERSISTING_L2_CACHE_SIZE));
  CAPTURE(bytes);
  CAPTURE(maxPersisting);
  CAPTURE(maxWindow);
  CHECK_MESSAGE(lastPersistingAsk == static_cast<long long>(std::min(bytes, maxPersisting)),
                "cuCtxSetLimit(CU_LIMIT_PERSISTING_L2_CACHE_SIZE) was asked for another size than min(bytes, the "
                "device's MAX_PERSISTING_L2_CACHE_SIZE) (-1: never asked)");
  CHECK_MESSAGE(returned == reported, "persistHot returned another size than cuCtxGetLimit reports");
  CUstreamAttrValue v{};
  CU_CHECK(cuStreamGetAttribute(s.get(), CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW, &v));
  const CUaccessPolicyWindow& w = v.accessPolicyWindow;
  const size_t wantBytes = std::min(bytes, maxWindow);
  CHECK_MESSAGE(w.base_ptr == reinterpret_cast<void*>(hot.get()), "the stream's window does not start at hot");
  CHECK_MESSAGE(w.num_bytes == wantBytes, "the window's num_bytes is not min(bytes, MAX_ACCESS_POLICY_WINDOW_SIZE)");
  CHECK_MESSAGE(w.hitProp == CU_ACCESS_PROPERTY_PERSISTING, "hitProp is not CU_ACCESS_PROPERTY_PERSISTING");
  CHECK_MESSAGE(w.missProp == CU_ACCESS_PROPERTY_STREAMING, "missProp is not CU_ACCESS_PROPERTY_STREAMING");
  const double wantRatio = std::min(1.0, static_cast<double>(reported) / static_cast<double>(wantBytes));
  CAPTURE(w.hitRatio);
  CAPTURE(wantRatio);
  CHECK_MESSAGE(std::fabs(w.hitRatio - wantRatio) < 1e-4,
                "hitRatio is not min(1, the set-aside the context reports / the window's bytes)");
}

}  // namespace

EXERCISE("serving-streams", "A latency stream and a batch stream at the ends of the priority range",
         "int least = 0, greatest = 0; CU_CHECK(cuCtxGetStreamPriorityRange(&least, &greatest)); then "
         "cuStreamCreateWithPriority(&s.latency, CU_STREAM_NON_BLOCKING, greatest) and the batch stream with least; "
         "if the second fails, cuStreamDestroy(s.latency) before throwing (wb::throwDriverError).") {
  TEST_CASE("R1 R2 R3: two different non-blocking streams, the latency one at the greatest priority the context reports, the batch one at the least, and nothing else held") {
    Lab lab;
    int least = 0, greatest = 0;
    CU_CHECK(cuCtxGetStreamPriorityRange(&least, &greatest));
    const wbx::Holdings before = wbx::holdings();
    const ex28::ServingStreams s = ex28::createServingStreams();
    const std::string held = wbx::holdings().differenceFrom(before);
    REQUIRE(s.latency != nullptr);
    REQUIRE(s.batch != nullptr);
    CHECK(s.latency != s.batch);
    int p = 0;
    unsigned flags = 0;
    CU_CHECK(cuStreamGetPriority(s.latency, &p));
    CAPTURE(greatest);
    CAPTURE(least);
    CHECK_MESSAGE(p == greatest, "the latency stream's priority is not the greatest of the range (the lowest number)");
    CU_CHECK(cuStreamGetPriority(s.batch, &p));
    CHECK_MESSAGE(p == least, "the batch stream's priority is not the least of the range");
    for (CUstream st : {s.latency, s.batch}) {
      CU_CHECK(cuStreamGetFlags(st, &flags));
      CHECK_MESSAGE((flags & CU_STREAM_NON_BLOCKING) != 0, "a stream is not CU_STREAM_NON_BLOCKING");
    }
    CAPTURE(held);
    CHECK_MESSAGE(held == "2 streams more", "createServingStreams holds something besides its two streams");
    destroy(s);
  }

  TEST_CASE("R4: when the first or the second cuStreamCreateWithPriority fails, it throws wb::DriverError with that code and holds no stream") {
    Lab lab;
    for (unsigned nth : {1u, 2u}) {
      CAPTURE(nth);
      const wbx::Holdings before = wbx::holdings();
      CUresult code = CUDA_SUCCESS;
      bool fired = false;
      {
        wbx::FailCall fail("cuStreamCreateWithPriority", CUDA_ERROR_OUT_OF_MEMORY, nth);
        try {
          destroy(ex28::createServingStreams());
        } catch (const wb::DriverError& e) {
          code = e.code();
        }
        fired = fail.fired();
      }
      REQUIRE_MESSAGE(fired, "createServingStreams did not make its streams with cuStreamCreateWithPriority");
      CHECK_MESSAGE(code == CUDA_ERROR_OUT_OF_MEMORY, "the failure did not throw wb::DriverError with its code");
      const std::string left = wbx::holdings().differenceFrom(before);
      CAPTURE(left);
      CHECK_MESSAGE(left.empty(), "a stream made before the failure was left held");
    }
  }
}

EXERCISE("persist-window", "A hot buffer kept in L2 for a stream's kernels",
         "cuCtxGetDevice, then the two attributes MAX_PERSISTING_L2_CACHE_SIZE and MAX_ACCESS_POLICY_WINDOW_SIZE; "
         "cuCtxSetLimit(CU_LIMIT_PERSISTING_L2_CACHE_SIZE, min(bytes, maxPersisting)); cuCtxGetLimit for what it "
         "became; a CUstreamAttrValue whose accessPolicyWindow has base_ptr, num_bytes = min(bytes, maxWindow), "
         "hitRatio = min(1, setAside / num_bytes), PERSISTING and STREAMING; cuStreamSetAttribute.") {
  TEST_CASE("R1 R2 R3: for an 8 MiB buffer, the set-aside asked, the size returned and the stream's window read back") {
    Lab lab;
    needPersistingL2();
    checkPersisted(lab, 8u << 20);
  }

  TEST_CASE("R1 R2 R3: for a buffer 2 MiB larger than the largest window, both sizes clamped to the device's and hitRatio below 1") {
    Lab lab;
    needPersistingL2();
    checkPersisted(lab, static_cast<size_t>(deviceAttribute(CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE)) +
                            (2u << 20));
  }

  TEST_CASE("R4: when cuCtxSetLimit or cuStreamSetAttribute fails, persistHot throws wb::DriverError") {
    Lab lab;
    needPersistingL2();
    SetAsideKept kept;
    wbt::DeviceBuffer hot(4u << 20);
    Stream s;
    for (const char* call : {"cuCtxSetLimit", "cuStreamSetAttribute"}) {
      CAPTURE(call);
      bool threw = false, fired = false;
      {
        wbx::FailCall fail(call, CUDA_ERROR_INVALID_VALUE);
        try {
          ex28::persistHot(s.get(), hot.get(), 4u << 20);
        } catch (const wb::DriverError&) {
          threw = true;
        }
        fired = fail.fired();
      }
      REQUIRE_MESSAGE(fired, "persistHot did not make this call");
      CHECK_MESSAGE(threw, "the call failed and persistHot did not throw wb::DriverError");
    }
  }
}

EXERCISE("start-signal", "A kernel launch that signals when its blocks have begun",
         "CUlaunchAttribute a{}; a.id = CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT; "
         "a.value.launchCompletionEvent.event = started; flags 0; then a zeroed CUlaunchConfig with gridDimX = blocks, "
         "blockDimX = threads, the other dimensions 1, hStream = stream, attrs = &a, numAttrs = 1, and "
         "CU_CHECK(cuLaunchKernelEx(&config, f, args, nullptr)).") {
  TEST_CASE("R1 R2: captured, with another stream waiting on the event, the launch is a kernel node of the shape asked for whose one edge leaves its LAUNCH_ORDER port") {
    Lab lab;
    needCompletionEvent();
#if CUDA_VERSION >= 12030
    Stream a, b;
    Event started, joined;
    ProbeArgs mine, theirs;
    Graph g;
    CU_CHECK(cuStreamBeginCapture(a.get(), CU_STREAM_CAPTURE_MODE_GLOBAL));
    try {
      ex28::launchSignallingStart(lab.probe, 3, 64, mine.args, a.get(), started.e);
      CU_CHECK(cuStreamWaitEvent(b.get(), started.e, 0));
      CU_CHECK(cuLaunchKernel(lab.probe, 1, 1, 1, 32, 1, 1, 0, b.get(), theirs.args, nullptr));
      CU_CHECK(cuEventRecord(joined.e, b.get()));
      CU_CHECK(cuStreamWaitEvent(a.get(), joined.e, 0));
    } catch (...) {
      endOwnCapture(a.get(), g);
      throw;
    }
    REQUIRE_MESSAGE(cuStreamEndCapture(a.get(), &g.g) == CUDA_SUCCESS,
                    "the capture was invalidated: the stream waiting on the event did not join it (was the event "
                    "recorded by the launch?)");
    size_t n = 0;
    CU_CHECK(cuGraphGetNodes(g.g, nullptr, &n));
    REQUIRE_MESSAGE(n == 2, "the capture holds another number of kernels than 2: launch in the stream given");
    CUgraphNode from[2] = {}, to[2] = {};
    CUgraphEdgeData data[2] = {};
    size_t edges = 2;
    CU_CHECK(cuGraphGetEdges_v2(g.g, from, to, data, &edges));
    REQUIRE(edges == 1);
    CAPTURE(static_cast<int>(data[0].from_port));
    CHECK_MESSAGE(data[0].from_port == CU_GRAPH_KERNEL_NODE_PORT_LAUNCH_ORDER,
                  "the waiting stream's edge leaves another port than LAUNCH_ORDER: the event was not the launch's "
                  "completion event");
    CUDA_KERNEL_NODE_PARAMS p{};
    CU_CHECK(cuGraphKernelNodeGetParams(from[0], &p));
    CHECK_MESSAGE((p.gridDimX == 3 && p.gridDimY == 1 && p.gridDimZ == 1), "another grid than 3 x 1 x 1 blocks");
    CHECK_MESSAGE((p.blockDimX == 64 && p.blockDimY == 1 && p.blockDimZ == 1), "another block than 64 x 1 x 1 threads");
    CHECK(p.sharedMemBytes == 0);
#endif
  }

  TEST_CASE("R1 R3: behind a closed gate in the stream given the call returns at once, the kernel runs once the gate opens, the event then is complete, and nothing is held") {
    Lab lab;
    needCompletionEvent();
    Stream s;
    Event started;
    ProbeArgs args;
    const bool gated = !wb::underSanitizer();  // compute-sanitizer ran no kernel beside a waiting one (lesson 09)
    const wbx::Holdings before = wbx::holdings();
    wb::Gate::Outcome seen = wb::Gate::TimedOut;
    unsigned ranEarly = 0;
    {
      std::unique_ptr<wb::Gate> gate;
      if (gated) gate = std::make_unique<wb::Gate>(lab.gate, s.get(), 2.0);  // a call that waits, waits 2 s at most
      const wbx::Holdings gateHeld = wbx::holdings();
      ex28::launchSignallingStart(lab.probe, 2, 32, args.args, s.get(), started.e);
      const std::string left = wbx::holdings().differenceFrom(gateHeld);
      CAPTURE(left);
      CHECK_MESSAGE(left.empty(), "launchSignallingStart left something held");
      if (gate) {
        seen = gate->outcome();
        CU_CHECK(cuStreamSynchronize(CU_STREAM_LEGACY));  // a launch into the legacy stream has run by now
        ranEarly = args.runs();
        gate->open();
      }
    }
    s.sync();
    if (gated) {
      CHECK_MESSAGE(seen == wb::Gate::Waiting, "launchSignallingStart waited for the stream: it only enqueues");
      CHECK_MESSAGE(ranEarly == 0, "the kernel ran before the work already in the stream: launch it in the stream given");
    }
    CHECK_MESSAGE(args.runs() == 2, "the kernel did not run its 2 blocks once");
    CHECK_MESSAGE(cuEventQuery(started.e) == CUDA_SUCCESS, "the event is not complete after the kernel ended");
    const std::string left = wbx::holdings().differenceFrom(before);
    CAPTURE(left);
    CHECK(left.empty());
  }

  TEST_CASE("R4: a cuLaunchKernelEx that fails with CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES makes launchSignallingStart throw wb::DriverError with that code") {
    Lab lab;
    needCompletionEvent();
    Stream s;
    Event started;
    ProbeArgs args;
    bool fired = false;
    CUresult code = CUDA_SUCCESS;
    {
      wbx::FailCall fail("cuLaunchKernelEx", CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
      try {
        ex28::launchSignallingStart(lab.probe, 1, 32, args.args, s.get(), started.e);
      } catch (const wb::DriverError& e) {
        code = e.code();
      }
      fired = fail.fired();
    }
    s.sync();
    REQUIRE_MESSAGE(fired, "launchSignallingStart did not call cuLaunchKernelEx, which takes the attribute");
    CHECK_MESSAGE(code == CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES,
                  "cuLaunchKernelEx failed and launchSignallingStart did not throw wb::DriverError with its code");
  }
}
