// The checks of lesson 15's exercises (lessons/15-graphs/exercises.cpp). Pending work comes from the
// lesson's gate kernel (common/gate.hpp): nothing sleeps, and every gate gives up at its deadline, so
// a learner's function that waits for the GPU costs seconds, never a hang. Results are proven by the
// values the graphs leave in device memory and by what the gate saw, never by timing.
#include "check.hpp"
#include "gate.hpp"
#include "15-graphs/exercises.hpp"

#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

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

// Graphs destroyed at scope exit: declare before whatever holds executable graphs of them.
struct Graphs {
  std::vector<CUgraph> all;
  ~Graphs() {
    for (CUgraph g : all)
      if (g) cuGraphDestroy(g);
  }
};

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

}  // namespace

EXERCISE("token-step", "A decode step captured once and replayed with each token's argument",
         "In the constructor, right after the second cuLaunchKernel of the capture, wb::streamCaptureInfo(stream, "
         "&status, nullptr, nullptr, &deps, &count) names that launch's node (deps[0]); keep it, end the capture, "
         "cuGraphInstantiate once. In run(): cuGraphKernelNodeGetParams(node) for the function and shape, point "
         "kernelParams at {&data, &n, &a, &token}, cuGraphExecKernelNodeSetParams(exec, node, &params), then "
         "cuGraphLaunch. cuGraphKernelNodeSetParams changes the graph, not the executable graph.") {
  TEST_CASE("five tokens run back to back behind a gate: run() returns at once, the executable graph never changes, and every launch adds its own token") {
    Lab lab;
    constexpr unsigned n = 4096;
    wbt::DeviceBuffer data(n * sizeof(float));
    CU_CHECK(cuMemsetD32(data.get(), 0, n));
    CU_CHECK(cuCtxSynchronize());
    Stream s;
    ex15::TokenStep step(lab.axpb, data.get(), n, s.get());
    const CUgraphExec first = step.exec();
    bool sameExec = first != nullptr;
    wb::Gate::Outcome seen = wb::Gate::TimedOut;
    const bool gated = !wb::underSanitizer();
    {
      std::unique_ptr<wb::Gate> gate;
      if (gated) gate = std::make_unique<wb::Gate>(lab.gate, s.get(), 5.0);  // a run() that waits, waits 5 s at most
      for (int token = 1; token <= 5; ++token) {
        step.run(static_cast<float>(token));
        sameExec = sameExec && step.exec() == first;
      }
      if (gate) {
        seen = gate->outcome();
        gate->open();
      }
      s.sync();
    }
    if (gated) CHECK_MESSAGE(seen == wb::Gate::Waiting, "run() waited for the stream: it must only enqueue");
    CHECK_MESSAGE(sameExec, "exec() changed between tokens: the step must be instantiated once, and updated");
    const std::vector<float> values = readBack(data.get(), n);
    size_t wrong = 0;
    for (float v : values) wrong += v != 57.0f;
    const float firstValue = values[0];
    CAPTURE(firstValue);
    CHECK_MESSAGE(wrong == 0, "elements that are not 57: a launch added another token than its own, or none");
  }
}

EXERCISE("exec-cache", "Update the executable graph when the driver allows it, instantiate anew when it refuses",
         "If there is no executable graph yet, cuGraphInstantiate. Otherwise cuGraphExecUpdate(exec, graph, &info): "
         "CUDA_SUCCESS means updated in place, return it; CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE means refused "
         "(info.result says why): cuGraphExecDestroy the old one and cuGraphInstantiate the new graph; any other code "
         "goes to CU_CHECK. Count every cuGraphInstantiate.") {
  TEST_CASE("five captures: the same topology updated in place, a new one instantiated, and every launch runs the graph last given") {
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
    const Capture captures[] = {{false, 1, 0, 1, false}, {false, 2, 0, 2, true}, {false, 3, 4, 7, false},
                                {false, 5, 6, 11, true}, {true, 0, 7, 7, false}};
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
    ex15::ExecCache cache;
    CUgraphExec previous = nullptr;
    for (size_t i = 0; i < graphs.all.size(); ++i) {
      CAPTURE(i);
      const CUgraphExec exec = cache.apply(graphs.all[i]);
      REQUIRE(exec != nullptr);
      if (captures[i].inPlace)
        CHECK_MESSAGE(exec == previous, "a graph of the same topology got a new executable graph: update it in place");
      CU_CHECK(cuGraphLaunch(exec, s.get()));
      s.sync();
      const float value = readBack(data.get(), 1)[0], expected = captures[i].expected;
      CHECK_MESSAGE(value == expected, "the executable graph did not run the graph last given to apply()");
      previous = exec;
    }
    const unsigned made = cache.instantiations();
    CHECK_MESSAGE(made == 3, "instantiations counted: the first graph and the two the update refused make 3");
  }
}

EXERCISE("capture-guard", "A capture that is always ended, and a stream that stays usable",
         "Begin the capture in the constructor and remember that it is open. end(): mark it closed first, then "
         "cuStreamEndCapture, and CU_CHECK its result (destroy a graph that came back with an error). The destructor: "
         "if still open, cuStreamEndCapture unconditionally, ignoring its result, and cuGraphDestroy what came back. "
         "Do not ask cuStreamIsCapturing first: an invalidated capture is not ACTIVE, and must still be ended.") {
  TEST_CASE("end() returns the captured graph, and it runs what was captured") {
    Lab lab;
    wb::PinnedWords words(2);
    Stream s;
    CUgraph graph = nullptr;
    {
      ex15::CaptureGuard guard(s.get());
      CU_CHECK(launchStamp(lab, words, 1, s.get()));
      graph = guard.end();
    }
    Graphs owned{{graph}};
    REQUIRE(graph != nullptr);
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

  TEST_CASE("the captured code throws: the guard ends the capture, and the stream runs work again") {
    Lab lab;
    wb::PinnedWords words(2);
    Stream s;
    bool threw = false;
    try {
      ex15::CaptureGuard guard(s.get());
      CU_CHECK(launchStamp(lab, words, 1, s.get()));
      throw std::runtime_error("the model code failed");
    } catch (const std::runtime_error& e) {
      threw = std::string(e.what()) == "the model code failed";
    }
    CHECK(threw);
    CHECK_MESSAGE(statusOf(s.get()) == CU_STREAM_CAPTURE_STATUS_NONE, "the stream is still in capture mode");
    CHECK(launchStamp(lab, words, 1, s.get()) == CUDA_SUCCESS);
    CHECK(cuStreamSynchronize(s.get()) == CUDA_SUCCESS);
    CHECK(words.read(1) == 1);
  }

  TEST_CASE("a synchronising call invalidates the capture and the captured code throws: the guard still ends it, and the stream runs work again") {
    Lab lab;
    wb::PinnedWords words(2);
    Stream s;
    bool threw = false;
    try {
      ex15::CaptureGuard guard(s.get());
      CU_CHECK(launchStamp(lab, words, 1, s.get()));
      CU_CHECK(cuStreamSynchronize(s.get()));  // invalid during a capture: it fails, and invalidates it
    } catch (const wb::DriverError&) {
      threw = true;
    }
    CHECK(threw);
    CHECK_MESSAGE(statusOf(s.get()) == CU_STREAM_CAPTURE_STATUS_NONE,
                  "the invalidated capture was never ended: the stream is still in capture mode");
    CHECK(launchStamp(lab, words, 1, s.get()) == CUDA_SUCCESS);
    CHECK(cuStreamSynchronize(s.get()) == CUDA_SUCCESS);
    CHECK(words.read(1) == 1);
  }

  TEST_CASE("end() of an invalidated capture throws wb::DriverError, and the stream is out of capture mode") {
    Lab lab;
    wb::PinnedWords words(2);
    Stream s;
    ex15::CaptureGuard guard(s.get());
    CU_CHECK(launchStamp(lab, words, 1, s.get()));
    CHECK(cuStreamQuery(s.get()) != CUDA_SUCCESS);  // invalid during a capture: it fails, and invalidates it
    CHECK_THROWS_AS(guard.end(), wb::DriverError);
    CHECK(statusOf(s.get()) == CU_STREAM_CAPTURE_STATUS_NONE);
  }
}
