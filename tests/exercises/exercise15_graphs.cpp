// The checks of lesson 15's exercises (lessons/15-graphs/exercises.cpp). Pending work comes from the
// lesson's gate kernel (common/gate.hpp): nothing sleeps, and every gate gives up at its deadline, so
// a learner's function that waits for the GPU costs seconds, never a hang. Results are proven by the
// values the graphs leave in memory, by what the gate saw, and by the ledger (tests/exercises/
// ledger.hpp): what the code holds afterwards, how often it instantiated, and what it does when a
// driver call in its middle fails. Never by timing.
#include "check.hpp"
#include "gate.hpp"
#include "15-graphs/exercises.hpp"

#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

// cuGraphExecUpdate through the ledger, so that a check can make it fail with another error than
// the refusal (ledger.cpp does not stand before it).
WBX_INTERPOSE(cuGraphExecUpdate, (CUgraphExec exec, CUgraph graph, CUgraphExecUpdateResultInfo* info),
              (exec, graph, info))

namespace {

using wbt::functionOf;

// The primary context of device 0, current, and the gate, stamp and axpb kernels as CUfunctions of
// it, each loaded before any gate closes (lesson 09).
struct Lab {
  wbt::RetainedPrimary primary{(wbt::initDriver(), wbt::device(0))};
  wbt::Pushed current{primary.get()};
  CUlibrary streams = nullptr, graphs = nullptr;
  CUfunction gate = nullptr, stamp = nullptr, axpb = nullptr;
  Lab() {
    CU_CHECK(cuLibraryLoadFromFile(&streams, wb::verifiedImagePath("streams.fatbin").c_str(), nullptr, nullptr, 0,
                                   nullptr, nullptr, 0));
    CU_CHECK(cuLibraryLoadFromFile(&graphs, wb::verifiedImagePath("graphs.fatbin").c_str(), nullptr, nullptr, 0,
                                   nullptr, nullptr, 0));
    wb::StreamKernels::load(streams);
    gate = functionOf(streams, "gate");
    stamp = functionOf(streams, "stamp");
    axpb = functionOf(graphs, "axpb");
    wbt::DeviceBuffer word(sizeof(float));
    CUdeviceptr p = word.get();
    unsigned none = 0;
    float one = 1.0f;
    void* args[] = {&p, &none, &one, &one};  // n = 0: touches nothing
    CU_CHECK(cuLaunchKernel(axpb, 1, 1, 1, 1, 1, 1, 0, nullptr, args, nullptr));
    CU_CHECK(cuCtxSynchronize());
  }
  ~Lab() {
    cuLibraryUnload(graphs);
    cuLibraryUnload(streams);
  }
};

CUstreamCaptureStatus statusOf(CUstream s) {
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  CU_CHECK(cuStreamIsCapturing(s, &status));
  return status;
}

using wbt::Stream;

// Graphs destroyed at scope exit: declare before whatever holds executable graphs of them. A check
// that saw code destroy graphs it did not own sets destroy = false: a second cuGraphDestroy of a
// handle is undefined, a leak in a failed check is not.
struct Graphs {
  std::vector<CUgraph> all;
  bool destroy = true;
  ~Graphs() {
    for (CUgraph g : all)
      if (g && destroy) cuGraphDestroy(g);
  }
};

// Ends a capture the check itself began, and destroys its graph.
void endOwnCapture(CUstream s) {
  CUgraph graph = nullptr;
  cuStreamEndCapture(s, &graph);
  if (graph) cuGraphDestroy(graph);
}

// Every instantiation the process has asked for, whichever of the two calls made it.
long instantiateCalls() { return wbx::calls("cuGraphInstantiate") + wbx::calls("cuGraphInstantiateWithParams"); }

long held(wbx::Held kind) { return wbx::holdings()[kind]; }

CUresult launchStamp(const Lab& lab, wb::PinnedWords& words, size_t slot, CUstream s) {
  CUdeviceptr counter = words.device(0), where = words.device(slot);
  void* args[] = {&counter, &where};
  return cuLaunchKernel(lab.stamp, 1, 1, 1, 1, 1, 1, 0, s, args, nullptr);
}

void launchAxpb(const Lab& lab, CUdeviceptr data, unsigned n, float a, float b, CUstream s) {
  void* args[] = {&data, &n, &a, &b};
  CU_CHECK(cuLaunchKernel(lab.axpb, ex15::kBlocks, 1, 1, ex15::kThreads, 1, 1, 0, s, args, nullptr));
}

size_t nodesIn(CUgraph graph) {
  size_t count = 0;
  CU_CHECK(cuGraphGetNodes(graph, nullptr, &count));
  return count;
}

std::vector<float> readBack(CUdeviceptr p, size_t n) {
  std::vector<float> v(n);
  CU_CHECK(cuMemcpyDtoH(v.data(), p, n * sizeof(float)));
  return v;
}

// Word i of pinned memory as the float a kernel stored there.
float floatAt(const wb::PinnedWords& words, size_t i) {
  const unsigned bits = words.read(i);
  float v = 0;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

// What a TokenStep construction left when the nth call of `entry` from its start failed: whether
// that failure was handed out, whether the constructor threw, the stream's capture status, and what
// the process holds more than before ("" for nothing).
struct FailedConstruction {
  bool fired = false, threw = false;
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  std::string left;
};

FailedConstruction constructFailing(const Lab& lab, CUdeviceptr data, unsigned n, CUstream s, const char* entry,
                                    unsigned nth, CUresult error) {
  FailedConstruction r;
  const wbx::Holdings before = wbx::holdings();
  {
    wbx::FailCall fail(entry, error, nth);
    try {
      ex15::TokenStep step(lab.axpb, data, n, s);
    } catch (const wb::NotDone&) {
      throw;
    } catch (const std::exception&) {
      r.threw = true;
    }
    r.fired = fail.fired();
  }
  r.status = statusOf(s);
  if (r.status != CU_STREAM_CAPTURE_STATUS_NONE) endOwnCapture(s);  // so that the next attempt can begin one
  r.left = wbx::holdings().differenceFrom(before);
  return r;
}

}  // namespace

EXERCISE("token-step", "A decode step captured once and replayed with each token's argument",
         "In the constructor, right after the second cuLaunchKernel of the capture, wb::streamCaptureInfo(stream, "
         "&status, nullptr, nullptr, &deps, &count) names that launch's node (deps[0]); keep it, end the capture "
         "whatever happened (destroy the graph if anything failed), cuGraphInstantiate once. In run(): "
         "cuGraphKernelNodeGetParams(node) for the function and shape, point kernelParams at {&data, &n, &a, &token}, "
         "cuGraphExecKernelNodeSetParams(exec, node, &params), then cuGraphLaunch(exec, stream). "
         "cuGraphKernelNodeSetParams changes the graph, not the executable graph.") {
  TEST_CASE("R1 R2 R3 R4 R5: five tokens run back to back behind a gate: run() only enqueues, in the stream, never instantiates, every launch adds its own token, and the destructor gives both graphs back") {
    Lab lab;
    constexpr unsigned n = 4096;
    wb::PinnedWords data(n);  // zeroed floats the host reads while the gate holds the stream
    Stream s;
    const wbx::Holdings before = wbx::holdings();
    bool sameExec = false, instantiatedInRun = false, ranEarly = false;
    wb::Gate::Outcome seen = wb::Gate::TimedOut;
    const bool gated = !wb::underSanitizer();
    {
      ex15::TokenStep step(lab.axpb, data.device(0), n, s.get());
      const CUgraphExec first = step.exec();
      const long instantiated = instantiateCalls();
      sameExec = first != nullptr;
      std::unique_ptr<wb::Gate> gate;
      if (gated) gate = std::make_unique<wb::Gate>(lab.gate, s.get(), 2.0);  // a run() that waits, waits 2 s at most
      for (int token = 1; token <= 5; ++token) {
        step.run(static_cast<float>(token));
        sameExec = sameExec && step.exec() == first;
      }
      instantiatedInRun = instantiateCalls() != instantiated;
      if (gate) {
        seen = gate->outcome();
        // The legacy stream does not wait for the check's non-blocking stream: a step launched there
        // has run once it is synchronised, while the gate still holds the stream given.
        CU_CHECK(cuStreamSynchronize(CU_STREAM_LEGACY));
        for (unsigned i = 0; i < n && !ranEarly; ++i) ranEarly = data.read(i) != 0;
        gate->open();
      }
      s.sync();
    }
    const std::string left = wbx::holdings().differenceFrom(before);
    if (gated) {
      CHECK_MESSAGE(seen == wb::Gate::Waiting, "run() waited for the stream: it must only enqueue");
      CHECK_MESSAGE(!ranEarly, "a launch ran before the work already in the stream: launch the graph in the stream given");
    }
    CHECK_MESSAGE(sameExec, "exec() changed between tokens: the step must be instantiated once, and updated");
    CHECK_MESSAGE(!instantiatedInRun, "run() instantiated: instantiate once, in the constructor, and give the executable graph the token");
    size_t wrong = 0;
    for (unsigned i = 0; i < n; ++i) wrong += floatAt(data, i) != 57.0f;
    const float firstValue = floatAt(data, 0);
    CAPTURE(firstValue);
    CHECK_MESSAGE(wrong == 0, "elements that are not 57: a launch added another token than its own, or none");
    CAPTURE(left);
    CHECK_MESSAGE(left.empty(), "the destructor left something held: it destroys the executable graph and the graph");
  }

  TEST_CASE("R6: the first or the second launch refused during the capture, or an instantiation that fails: the constructor throws, the stream is out of capture mode, and nothing is held") {
    Lab lab;
    constexpr unsigned n = 256;
    wbt::DeviceBuffer data(n * sizeof(float));
    Stream s;
    struct Failure {
      const char* entry;
      const char* otherEntry;  // the same step through the other call the task allows
      unsigned nth;
      CUresult error;
      const char* what;
    };
    const Failure failures[] = {
        {"cuLaunchKernel", "cuLaunchKernelEx", 1, CUDA_ERROR_INVALID_VALUE, "the capture's first launch refused"},
        {"cuLaunchKernel", "cuLaunchKernelEx", 2, CUDA_ERROR_INVALID_VALUE, "the capture's second launch refused"},
        {"cuGraphInstantiate", "cuGraphInstantiateWithParams", 1, CUDA_ERROR_OUT_OF_MEMORY, "the instantiation failed"}};
    for (const Failure& f : failures) {
      CAPTURE(f.what);
      FailedConstruction r = constructFailing(lab, data.get(), n, s.get(), f.entry, f.nth, f.error);
      if (!r.fired) r = constructFailing(lab, data.get(), n, s.get(), f.otherEntry, f.nth, f.error);
      CHECK_MESSAGE(r.fired, "the injected failure never reached the constructor: launch with cuLaunchKernel (or "
                             "cuLaunchKernelEx) and instantiate with cuGraphInstantiate, as the task says");
      if (!r.fired) continue;
      CHECK_MESSAGE(r.threw, "the constructor did not throw when a driver call failed");
      CHECK_MESSAGE(r.status == CU_STREAM_CAPTURE_STATUS_NONE,
                    "the constructor left the stream capturing: end the capture whatever happened in it");
      CAPTURE(r.left);
      CHECK_MESSAGE(r.left.empty(), "the failed constructor left something held: destroy the graph the capture gave back");
    }
  }
}

EXERCISE("exec-cache", "Update the executable graph when the driver allows it, instantiate anew when it refuses",
         "If there is no executable graph yet, cuGraphInstantiate. Otherwise cuGraphExecUpdate(exec, graph, &info): "
         "CUDA_SUCCESS means updated in place, return it; CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE means refused "
         "(info.result says why): cuGraphExecDestroy the old one and cuGraphInstantiate the new graph; any other code "
         "goes to CU_CHECK before anything is destroyed. Count every cuGraphInstantiate. Never destroy the graph "
         "you are given.") {
  TEST_CASE("R1 R2 R3 R4 R5 R6: six captures: the same topology updated in place, a new one instantiated, one executable graph held, every launch runs the graph last given, another error thrown with the executable graph kept") {
    Lab lab;
    constexpr unsigned n = 1024;
    wbt::DeviceBuffer data(n * sizeof(float));
    Stream s;
    struct Capture {
      bool memsetFirst;
      float first, second;  // the second kernel only where second != 0
      float expected;
      bool inPlace;  // the same topology and node types as the graph before
    };
    // The sixth is applied after an update that failed with another error: the same topology as the fifth.
    const Capture captures[] = {{false, 1, 0, 1, false}, {false, 2, 0, 2, true}, {false, 3, 4, 7, false},
                                {false, 5, 6, 11, true}, {true, 0, 7, 7, false}, {true, 0, 8, 8, true}};
    constexpr long kGraphs = 6;
    Graphs graphs;  // destroyed after the cache and its executable graph
    for (const Capture& c : captures) {
      CU_CHECK(cuStreamBeginCapture(s.get(), CU_STREAM_CAPTURE_MODE_GLOBAL));
      if (c.memsetFirst)
        CU_CHECK(cuMemsetD32Async(data.get(), 0, n, s.get()));
      else
        launchAxpb(lab, data.get(), n, 0.0f, c.first, s.get());  // x = first
      if (c.second != 0) launchAxpb(lab, data.get(), n, 1.0f, c.second, s.get());  // x += second
      graphs.all.push_back(nullptr);
      CU_CHECK(cuStreamEndCapture(s.get(), &graphs.all.back()));
    }
    const long graphsBefore = held(wbx::Held::Graphs), execsBefore = held(wbx::Held::GraphExecs);
    const long instantiatedBefore = instantiateCalls();
    const auto launchAndRead = [&](CUgraphExec exec) {
      CU_CHECK(cuGraphLaunch(exec, s.get()));
      s.sync();
      return readBack(data.get(), 1)[0];
    };
    {
      ex15::ExecCache cache;
      CUgraphExec previous = nullptr;
      for (size_t i = 0; i < 5; ++i) {
        CAPTURE(i);
        const CUgraphExec exec = cache.apply(graphs.all[i]);
        const long execsHeld = held(wbx::Held::GraphExecs) - execsBefore;
        const long graphsHeld = held(wbx::Held::Graphs) - graphsBefore + kGraphs;
        if (graphsHeld != kGraphs) graphs.destroy = false;  // what is left of them leaks rather than being destroyed twice
        REQUIRE_MESSAGE(graphsHeld == kGraphs, "apply() destroyed a graph it was given: the caller keeps ownership");
        CHECK_MESSAGE(execsHeld == 1, "the process holds another number of executable graphs than the cache's one: destroy the one an instantiation replaces");
        REQUIRE(exec != nullptr);
        if (captures[i].inPlace)
          CHECK_MESSAGE(exec == previous, "a graph of the same topology got a new executable graph: update it in place");
        const float value = launchAndRead(exec), expected = captures[i].expected;
        CHECK_MESSAGE(value == expected, "the executable graph did not run the graph last given to apply()");
        previous = exec;
      }
      const unsigned made = cache.instantiations();
      const long instantiatedCalls = instantiateCalls() - instantiatedBefore;
      CHECK_MESSAGE(made == 3, "instantiations counted: the first graph and the two the update refused make 3");
      CHECK_MESSAGE(instantiatedCalls == 3, "cuGraphInstantiate was called another number of times than the first graph and the two refusals need");

      // Any error but the refusal: two of them, so that no single code can pass for "the others".
      for (CUresult error : {CUDA_ERROR_OUT_OF_MEMORY, CUDA_ERROR_INVALID_VALUE}) {
        const std::string code = wb::errorName(error);
        CAPTURE(code);
        bool threw = false, fired = false;
        {
          wbx::FailCall fail("cuGraphExecUpdate", error);
          try {
            cache.apply(graphs.all[5]);
          } catch (const wb::DriverError&) {
            threw = true;
          }
          fired = fail.fired();
        }
        const long execsAfterFailure = held(wbx::Held::GraphExecs) - execsBefore;
        CHECK_MESSAGE(fired, "apply() never called cuGraphExecUpdate for a graph of the same topology");
        CHECK_MESSAGE(threw, "cuGraphExecUpdate failed with an error that is not the refusal, and apply() did not throw wb::DriverError");
        CHECK_MESSAGE(execsAfterFailure == 1, "after the failed update the cache does not hold its one executable graph");
        CHECK_MESSAGE(cache.instantiations() == 3, "the failed update led to an instantiation");
      }
      const CUgraphExec again = cache.apply(graphs.all[5]);
      CHECK_MESSAGE(again == previous, "after the failed update the same topology got a new executable graph: keep the executable graph when an update fails");
      CHECK_MESSAGE(cache.instantiations() == 3, "the failed update led to an instantiation");
      if (again) CHECK(launchAndRead(again) == 8.0f);
    }
    const long execsLeft = held(wbx::Held::GraphExecs) - execsBefore;
    CHECK_MESSAGE(execsLeft == 0, "the destructor did not destroy the executable graph");
  }
}

EXERCISE("capture-guard", "A capture that is always ended, and a stream that stays usable",
         "Begin the capture in the constructor, in the mode given, and remember that it is open. end(): mark it "
         "closed first, then cuStreamEndCapture, and CU_CHECK its result (destroy a graph that came back with an "
         "error). The destructor: if still open, cuStreamEndCapture unconditionally, ignoring its result, and "
         "cuGraphDestroy what came back. Do not ask cuStreamIsCapturing first: an invalidated capture is not ACTIVE, "
         "and must still be ended.") {
  TEST_CASE("R1 R2: end() returns the captured graph, the guard leaves it to the caller, and it runs what was captured") {
    Lab lab;
    wb::PinnedWords words(2);
    Stream s;
    CUgraph graph = nullptr;
    const wbx::Holdings before = wbx::holdings();
    {
      ex15::CaptureGuard guard(s.get());
      CU_CHECK(launchStamp(lab, words, 1, s.get()));
      graph = guard.end();
    }
    const std::string took = wbx::holdings().differenceFrom(before);
    Graphs owned{{graph}};
    owned.destroy = took == "1 graph more";  // a graph the guard destroyed is not destroyed twice
    CAPTURE(took);
    REQUIRE(graph != nullptr);
    REQUIRE_MESSAGE(took == "1 graph more", "the graph end() returned is not held once the guard is gone: it is the caller's, the guard must not destroy it");
    CHECK(nodesIn(graph) == 1);
    CHECK(statusOf(s.get()) == CU_STREAM_CAPTURE_STATUS_NONE);
    CHECK(words.read(1) == 0);  // captured, not run
    CUgraphExec exec = nullptr;
    CU_CHECK(cuGraphInstantiate(&exec, graph, 0));
    CU_CHECK(cuGraphLaunch(exec, s.get()));
    s.sync();
    CU_CHECK(cuGraphExecDestroy(exec));
    CHECK(words.read(1) == 1);
  }

  TEST_CASE("R5: the captured code throws: the guard ends the capture, destroys its graph, and the stream runs work again") {
    Lab lab;
    wb::PinnedWords words(2);
    Stream s;
    const wbx::Holdings before = wbx::holdings();
    bool threw = false;
    try {
      ex15::CaptureGuard guard(s.get());
      CU_CHECK(launchStamp(lab, words, 1, s.get()));
      throw std::runtime_error("the model code failed");
    } catch (const std::runtime_error& e) {
      threw = std::string(e.what()) == "the model code failed";
    }
    const CUstreamCaptureStatus status = statusOf(s.get());
    const std::string left = wbx::holdings().differenceFrom(before);
    CHECK(threw);
    CHECK_MESSAGE(status == CU_STREAM_CAPTURE_STATUS_NONE, "the stream is still in capture mode");
    CAPTURE(left);
    CHECK_MESSAGE(left.empty(), "the guard left something held: destroy the graph cuStreamEndCapture gave back");
    CHECK(launchStamp(lab, words, 1, s.get()) == CUDA_SUCCESS);
    CHECK(cuStreamSynchronize(s.get()) == CUDA_SUCCESS);
    CHECK(words.read(1) == 1);
  }

  TEST_CASE("R5: a synchronising call invalidates the capture and the captured code throws: the guard still ends it, and the stream runs work again") {
    Lab lab;
    wb::PinnedWords words(2);
    Stream s;
    const wbx::Holdings before = wbx::holdings();
    bool threw = false;
    try {
      ex15::CaptureGuard guard(s.get());
      CU_CHECK(launchStamp(lab, words, 1, s.get()));
      CU_CHECK(cuStreamSynchronize(s.get()));  // invalid during a capture: it fails, and invalidates it
    } catch (const wb::DriverError&) {
      threw = true;
    }
    const CUstreamCaptureStatus status = statusOf(s.get());
    const std::string left = wbx::holdings().differenceFrom(before);
    CHECK(threw);
    CHECK_MESSAGE(status == CU_STREAM_CAPTURE_STATUS_NONE,
                  "the invalidated capture was never ended: the stream is still in capture mode");
    CAPTURE(left);
    CHECK(left.empty());
    CHECK(launchStamp(lab, words, 1, s.get()) == CUDA_SUCCESS);
    CHECK(cuStreamSynchronize(s.get()) == CUDA_SUCCESS);
    CHECK(words.read(1) == 1);
  }

  TEST_CASE("R3: end() of an invalidated capture throws wb::DriverError, and the stream is out of capture mode") {
    Lab lab;
    wb::PinnedWords words(2);
    Stream s;
    ex15::CaptureGuard guard(s.get());
    CU_CHECK(launchStamp(lab, words, 1, s.get()));
    CHECK(cuStreamQuery(s.get()) != CUDA_SUCCESS);  // invalid during a capture: it fails, and invalidates it
    CHECK_THROWS_AS(guard.end(), wb::DriverError);
    CHECK(statusOf(s.get()) == CU_STREAM_CAPTURE_STATUS_NONE);
  }

  TEST_CASE("R4: after end(), whether it returned or threw, the guard's destructor leaves alone a capture the caller began on the stream since") {
    Lab lab;
    wb::PinnedWords words(2);
    Stream s;
    CUgraph graph = nullptr;
    {
      ex15::CaptureGuard guard(s.get());
      CU_CHECK(launchStamp(lab, words, 1, s.get()));
      graph = guard.end();
      CU_CHECK(cuStreamBeginCapture(s.get(), CU_STREAM_CAPTURE_MODE_GLOBAL));  // the caller's next capture
    }
    Graphs owned{{graph}};
    const CUstreamCaptureStatus afterSuccess = statusOf(s.get());
    if (afterSuccess != CU_STREAM_CAPTURE_STATUS_NONE) endOwnCapture(s.get());
    bool threw = false;
    {
      ex15::CaptureGuard guard(s.get());
      CHECK(cuStreamQuery(s.get()) != CUDA_SUCCESS);  // invalidates the capture
      try {
        guard.end();
      } catch (const wb::DriverError&) {
        threw = true;
      }
      CU_CHECK(cuStreamBeginCapture(s.get(), CU_STREAM_CAPTURE_MODE_GLOBAL));  // the caller tries again
    }
    const CUstreamCaptureStatus afterFailure = statusOf(s.get());
    if (afterFailure != CU_STREAM_CAPTURE_STATUS_NONE) endOwnCapture(s.get());
    CHECK(threw);
    CHECK_MESSAGE(afterSuccess == CU_STREAM_CAPTURE_STATUS_ACTIVE,
                  "the guard's destructor ended a capture begun after end() returned: end() closes the guard");
    CHECK_MESSAGE(afterFailure == CU_STREAM_CAPTURE_STATUS_ACTIVE,
                  "the guard's destructor ended a capture begun after end() threw: end() closes the guard either way");
  }

  TEST_CASE("R1: a guard begun in RELAXED mode captures in that mode: an allocation in the capturing thread is allowed, and the capture stays active") {
    Lab lab;
    wb::PinnedWords words(2);
    Stream s;
    CUresult alloc = CUDA_ERROR_UNKNOWN;
    CUstreamCaptureStatus during = CU_STREAM_CAPTURE_STATUS_NONE;
    CUgraph graph = nullptr;
    CUdeviceptr p = 0;
    {
      ex15::CaptureGuard guard(s.get(), CU_STREAM_CAPTURE_MODE_RELAXED);
      CU_CHECK(launchStamp(lab, words, 1, s.get()));
      // The reference: a thread whose only capture was begun in RELAXED mode is not prohibited from
      // potentially unsafe calls, such as an allocation.
      alloc = cuMemAlloc(&p, 4096);
      during = statusOf(s.get());
      try {
        graph = guard.end();
      } catch (const wb::DriverError&) {
        // a capture the allocation invalidated: graph stays NULL, and the checks below say why
      }
    }
    Graphs owned{{graph}};
    if (alloc == CUDA_SUCCESS) CU_CHECK(cuMemFree(p));  // after the capture: cuMemFree may synchronise
    CHECK_MESSAGE(alloc == CUDA_SUCCESS, "cuMemAlloc failed during a capture asked for in RELAXED mode: begin the capture in the mode given");
    CHECK(during == CU_STREAM_CAPTURE_STATUS_ACTIVE);
    CHECK(graph != nullptr);
  }
}
