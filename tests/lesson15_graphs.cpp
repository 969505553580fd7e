// Lesson 15's claims: captured work does not run until its graph is launched, and every launch runs
// all of it in capture order; a synchronising call invalidates a capture, which then fails every
// later use of the stream until cuStreamEndCapture returns an error and no graph; the legacy stream
// is refused while a blocking stream captures; what the capture modes allow; new kernel arguments
// for an executable graph apply to later launches only; cuGraphExecUpdate takes a graph of the same
// topology and refuses another with the documented result; a hand-built graph keeps its
// dependencies; conditional nodes loop and branch on the device; and one graph launch costs less per
// kernel than many stream launches. Pending work comes from the gate kernel (common/gate.hpp):
// nothing here sleeps, and no gate stays closed past its deadline.
#include "damaged_images.hpp"
#include "gate.hpp"
#include "support.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <initializer_list>
#include <thread>
#include <vector>

namespace {

using wbt::functionOf;

// The primary context of device 0, current, and the kernels of streams.fatbin and graphs.fatbin as
// CUfunctions of it, each loaded before any gate closes (lesson 09).
struct Lab {
  wbt::RetainedPrimary primary{wbt::deviceKeepingPrimary(0)};
  wbt::Pushed current{primary.get()};
  CUlibrary streams = nullptr, graphs = nullptr;
  CUfunction gate = nullptr, stamp = nullptr, tick = nullptr, axpb = nullptr, loopBody = nullptr;
  Lab() {
    CU_CHECK(cuLibraryLoadFromFile(&streams, wb::verifiedImagePath("streams.fatbin").c_str(), nullptr, nullptr, 0,
                                   nullptr, nullptr, 0));
    CU_CHECK(cuLibraryLoadFromFile(&graphs, wb::verifiedImagePath("graphs.fatbin").c_str(), nullptr, nullptr, 0,
                                   nullptr, nullptr, 0));
    wb::StreamKernels::load(streams);
    gate = functionOf(streams, "gate");
    stamp = functionOf(streams, "stamp");
    tick = functionOf(graphs, "tick");
    axpb = functionOf(graphs, "axpb");
    wbt::DeviceBuffer word(sizeof(float));
    CUdeviceptr p = word.get();
    unsigned none = 0;
    float one = 1.0f;
    void* tickArgs[] = {&p};
    void* axpbArgs[] = {&p, &none, &one, &one};
    CU_CHECK(cuLaunchKernel(tick, 1, 1, 1, 1, 1, 1, 0, nullptr, tickArgs, nullptr));
    CU_CHECK(cuLaunchKernel(axpb, 1, 1, 1, 1, 1, 1, 0, nullptr, axpbArgs, nullptr));
    CU_CHECK(cuCtxSynchronize());
#if CUDA_VERSION >= 12040
    loopBody = functionOf(graphs, "loop_body");
    CU_CHECK(cuFuncLoad(loopBody));
#endif
  }
  ~Lab() {
    cuLibraryUnload(graphs);
    cuLibraryUnload(streams);
  }
  CUcontext ctx() const { return primary.get(); }
};

CUstreamCaptureStatus statusOf(CUstream s) {
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  CU_CHECK(cuStreamIsCapturing(s, &status));
  return status;
}

using wbt::Stream;

// A graph, destroyed at scope exit.
class Graph {
 public:
  Graph() = default;
  explicit Graph(CUgraph g) : g_(g) {}
  ~Graph() {
    if (g_) cuGraphDestroy(g_);
  }
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  CUgraph get() const { return g_; }
  CUgraph* out() { return &g_; }
  static Graph created() {
    Graph g;
    CU_CHECK(cuGraphCreate(g.out(), 0));
    return g;
  }
  Graph(Graph&& other) noexcept : g_(other.g_) { other.g_ = nullptr; }

 private:
  CUgraph g_ = nullptr;
};

// An executable graph, destroyed at scope exit.
class Exec {
 public:
  explicit Exec(CUgraph graph) { CU_CHECK(cuGraphInstantiate(&e_, graph, 0)); }
  ~Exec() {
    if (e_) cuGraphExecDestroy(e_);
  }
  Exec(const Exec&) = delete;
  Exec& operator=(const Exec&) = delete;
  CUgraphExec get() const { return e_; }
  void run(CUstream s) const {
    CU_CHECK(cuGraphLaunch(e_, s));
    CU_CHECK(cuStreamSynchronize(s));
  }

 private:
  CUgraphExec e_ = nullptr;
};

CUresult launchStamp(const Lab& lab, wb::PinnedWords& words, size_t slot, CUstream s) {
  CUdeviceptr counter = words.device(0), where = words.device(slot);
  void* args[] = {&counter, &where};
  return cuLaunchKernel(lab.stamp, 1, 1, 1, 1, 1, 1, 0, s, args, nullptr);
}

void launchAxpb(const Lab& lab, CUdeviceptr data, unsigned n, float a, float b, CUstream s) {
  void* args[] = {&data, &n, &a, &b};
  CU_CHECK(cuLaunchKernel(lab.axpb, 4, 1, 1, 256, 1, 1, 0, s, args, nullptr));
}

// A capture of work(s) in mode: the graph it made.
template <class Work>
Graph captured(CUstream s, Work&& work, CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_GLOBAL) {
  CU_CHECK(cuStreamBeginCapture(s, mode));
  work(s);
  Graph g;
  CU_CHECK(cuStreamEndCapture(s, g.out()));
  return g;
}

std::vector<CUgraphNode> nodesOf(CUgraph graph) {
  size_t count = 0;
  CU_CHECK(cuGraphGetNodes(graph, nullptr, &count));
  std::vector<CUgraphNode> nodes(count);
  CU_CHECK(cuGraphGetNodes(graph, nodes.data(), &count));
  return nodes;
}

float firstFloat(CUdeviceptr p) {
  float v = 0;
  CU_CHECK(cuMemcpyDtoH(&v, p, sizeof v));
  return v;
}

unsigned firstWord(CUdeviceptr p) {
  unsigned v = 0;
  CU_CHECK(cuMemcpyDtoH(&v, p, sizeof v));
  return v;
}

CUgraphNode addKernel(CUgraph graph, CUfunction f, void** args, std::initializer_list<CUgraphNode> after) {
  CUDA_KERNEL_NODE_PARAMS p{};
  p.func = f;
  p.gridDimX = p.gridDimY = p.gridDimZ = 1;
  p.blockDimX = p.blockDimY = p.blockDimZ = 1;
  p.kernelParams = args;
  const std::vector<CUgraphNode> dependencies(after);
  CUgraphNode node = nullptr;
  CU_CHECK(cuGraphAddKernelNode(&node, graph, dependencies.data(), dependencies.size(), &p));
  return node;
}

template <class T>
T argument(const CUDA_KERNEL_NODE_PARAMS& p, size_t i) {
  REQUIRE(p.kernelParams != nullptr);
  return *static_cast<const T*>(p.kernelParams[i]);
}

void CUDA_CB markDone(void* flag) { static_cast<std::atomic<bool>*>(flag)->store(true); }

// The nodes a node depends on, as the graph holds them (edge data left out: the course's graphs
// have default edges only, so the query loses nothing).
std::vector<CUgraphNode> dependenciesOf(CUgraphNode node) {
  size_t n = 0;
#if CUDA_VERSION >= 13000  // 13.0's default form takes edge data (cuGraphNodeGetDependencies_v2)
  CU_CHECK(cuGraphNodeGetDependencies(node, nullptr, nullptr, &n));
  std::vector<CUgraphNode> nodes(n);
  if (n) CU_CHECK(cuGraphNodeGetDependencies(node, nodes.data(), nullptr, &n));
#else
  CU_CHECK(cuGraphNodeGetDependencies(node, nullptr, &n));
  std::vector<CUgraphNode> nodes(n);
  if (n) CU_CHECK(cuGraphNodeGetDependencies(node, nodes.data(), &n));
#endif
  nodes.resize(n);
  return nodes;
}

// Spins on a word of pinned memory until a kernel sets it, or limitMs pass: no CUDA call, so the
// host learns that the GPU got there without synchronising with anything.
bool waitForWord(const wb::PinnedWords& words, size_t slot, double limitMs) {
  const wb::Stopwatch clock;
  while (words.read(slot) == 0)
    if (clock.ms() > limitMs) return false;
  return true;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

TEST_SUITE("capture") {
  TEST_CASE("work put into a capturing stream does not run; each launch of the instantiated graph runs all of it, in capture order") {
    Lab lab;
    wb::PinnedWords words(3);
    Stream s;
    Graph g = captured(s.get(), [&](CUstream cs) {
      CU_CHECK(launchStamp(lab, words, 1, cs));
      CU_CHECK(launchStamp(lab, words, 2, cs));
    });
    s.sync();  // anything the stream was given has run by now
    CHECK(words.read(1) == 0);
    CHECK(words.read(2) == 0);
    CHECK(nodesOf(g.get()).size() == 2);
    Exec exec(g.get());
    exec.run(s.get());
    CHECK(words.read(1) == 1);
    CHECK(words.read(2) == 2);
    exec.run(s.get());
    CHECK(words.read(1) == 3);
    CHECK(words.read(2) == 4);
  }

  TEST_CASE("cuStreamIsCapturing and cuStreamGetCaptureInfo say ACTIVE during a capture, with an id of its own and the last captured node as the next one's dependency, and NONE after it") {
    Lab lab;
    wb::PinnedWords words(2);
    Stream s;
    cuuint64_t ids[2] = {0, 0};
    for (cuuint64_t& id : ids) {
      CHECK(statusOf(s.get()) == CU_STREAM_CAPTURE_STATUS_NONE);
      REQUIRE(cuStreamBeginCapture(s.get(), CU_STREAM_CAPTURE_MODE_GLOBAL) == CUDA_SUCCESS);
      CHECK(statusOf(s.get()) == CU_STREAM_CAPTURE_STATUS_ACTIVE);
      CU_CHECK(launchStamp(lab, words, 1, s.get()));
      CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
      CUgraph during = nullptr;
      const CUgraphNode* dependencies = nullptr;
      size_t count = 0;
      CHECK(wb::streamCaptureInfo(s.get(), &status, &id, &during, &dependencies, &count) == CUDA_SUCCESS);
      CHECK(status == CU_STREAM_CAPTURE_STATUS_ACTIVE);
      REQUIRE(count == 1);
      const CUgraphNode last = dependencies[0];  // valid until the next call on the stream: copied
      Graph g;
      REQUIRE(cuStreamEndCapture(s.get(), g.out()) == CUDA_SUCCESS);
      CHECK(g.get() == during);  // the graph being captured into is the graph the capture returns
      CHECK(nodesOf(g.get()) == std::vector<CUgraphNode>{last});
      CHECK(statusOf(s.get()) == CU_STREAM_CAPTURE_STATUS_NONE);
    }
    CHECK(ids[0] != ids[1]);
  }

  TEST_CASE("cuGraphLaunch only enqueues: behind a gate the graph's work is pending, and it runs once the gate opens") {
    Lab lab;
    wb::PinnedWords words(2);
    Stream s;
    Graph g = captured(s.get(), [&](CUstream cs) { CU_CHECK(launchStamp(lab, words, 1, cs)); });
    Exec exec(g.get());
    if (wb::underSanitizer()) {  // on driver 580 some calls waited there for a gate (lesson 09)
      MESSAGE("no gate under compute-sanitizer: the launch is only checked to run");
      exec.run(s.get());
      CHECK(words.read(1) == 1);
      return;
    }
    {
      wb::Gate gate(lab.gate, s.get());
      CHECK(cuGraphLaunch(exec.get(), s.get()) == CUDA_SUCCESS);
      CHECK(cuStreamQuery(s.get()) == CUDA_ERROR_NOT_READY);
      CHECK(words.read(1) == 0);
      CHECK(gate.outcome() == wb::Gate::Waiting);
      gate.open();
      s.sync();
      CHECK(gate.outcome() == wb::Gate::Released);
    }
    CHECK(words.read(1) == 1);
  }
}

TEST_SUITE("capture-rules") {
  TEST_CASE("a synchronising call during a GLOBAL capture fails and invalidates it: later work in the stream fails, cuStreamEndCapture returns an error and no graph, and the stream then runs work again") {
    Lab lab;
    struct Call {
      const char* name;
      CUresult (*call)(CUstream);
    };
    const Call calls[] = {{"cuCtxSynchronize", [](CUstream) { return cuCtxSynchronize(); }},
                          {"cuStreamSynchronize", [](CUstream s) { return cuStreamSynchronize(s); }},
                          {"cuStreamQuery", [](CUstream s) { return cuStreamQuery(s); }}};
    for (const Call& c : calls) {
      CAPTURE(c.name);
      wb::PinnedWords words(2);
      Stream s;
      REQUIRE(cuStreamBeginCapture(s.get(), CU_STREAM_CAPTURE_MODE_GLOBAL) == CUDA_SUCCESS);
      CU_CHECK(launchStamp(lab, words, 1, s.get()));
      const CUresult rc = c.call(s.get());
      const std::string name = wb::errorName(rc);
      CAPTURE(name);  // the functions' pages list no code: the driver's answer, for the record
      CHECK(rc != CUDA_SUCCESS);
      CHECK(statusOf(s.get()) == CU_STREAM_CAPTURE_STATUS_INVALIDATED);
      CUstreamCaptureStatus info = CU_STREAM_CAPTURE_STATUS_NONE;
      CHECK(wb::streamCaptureInfo(s.get(), &info) == CUDA_SUCCESS);
      CHECK(info == CU_STREAM_CAPTURE_STATUS_INVALIDATED);
      CHECK(launchStamp(lab, words, 1, s.get()) != CUDA_SUCCESS);
      Graph g;
      CHECK(cuStreamEndCapture(s.get(), g.out()) != CUDA_SUCCESS);
      CHECK(g.get() == nullptr);
      CHECK(statusOf(s.get()) == CU_STREAM_CAPTURE_STATUS_NONE);
      CHECK(launchStamp(lab, words, 1, s.get()) == CUDA_SUCCESS);
      CHECK(cuStreamSynchronize(s.get()) == CUDA_SUCCESS);
      CHECK(words.read(1) == 1);  // only this last stamp ran
    }
  }

  TEST_CASE("synchronising or querying the capturing stream fails and invalidates a THREAD_LOCAL or RELAXED capture too, and cuCtxSynchronize a THREAD_LOCAL one") {
    Lab lab;
    struct Case {
      CUstreamCaptureMode mode;
      const char* name;
      CUresult (*call)(CUstream);
    };
    const Case cases[] = {
        {CU_STREAM_CAPTURE_MODE_THREAD_LOCAL, "cuStreamSynchronize", [](CUstream s) { return cuStreamSynchronize(s); }},
        {CU_STREAM_CAPTURE_MODE_THREAD_LOCAL, "cuStreamQuery", [](CUstream s) { return cuStreamQuery(s); }},
        {CU_STREAM_CAPTURE_MODE_THREAD_LOCAL, "cuCtxSynchronize", [](CUstream) { return cuCtxSynchronize(); }},
        {CU_STREAM_CAPTURE_MODE_RELAXED, "cuStreamSynchronize", [](CUstream s) { return cuStreamSynchronize(s); }},
        {CU_STREAM_CAPTURE_MODE_RELAXED, "cuStreamQuery", [](CUstream s) { return cuStreamQuery(s); }}};
    for (const Case& c : cases) {
      const int mode = static_cast<int>(c.mode);
      CAPTURE(mode);
      CAPTURE(c.name);
      wb::PinnedWords words(2);
      Stream s;
      REQUIRE(cuStreamBeginCapture(s.get(), c.mode) == CUDA_SUCCESS);
      CU_CHECK(launchStamp(lab, words, 1, s.get()));
      const CUresult rc = c.call(s.get());
      const std::string name = wb::errorName(rc);
      CAPTURE(name);
      CHECK(rc != CUDA_SUCCESS);
      CHECK(statusOf(s.get()) == CU_STREAM_CAPTURE_STATUS_INVALIDATED);
      Graph g;
      CHECK(cuStreamEndCapture(s.get(), g.out()) != CUDA_SUCCESS);
      CHECK(g.get() == nullptr);
      CHECK(statusOf(s.get()) == CU_STREAM_CAPTURE_STATUS_NONE);
    }
  }

  TEST_CASE("while a blocking stream captures, cuStreamIsCapturing(CU_STREAM_LEGACY) returns CUDA_ERROR_STREAM_CAPTURE_IMPLICIT and the capture stays ACTIVE") {
    Lab lab;
    wb::PinnedWords words(2);
    Stream blocking(CU_STREAM_DEFAULT);
    REQUIRE(cuStreamBeginCapture(blocking.get(), CU_STREAM_CAPTURE_MODE_GLOBAL) == CUDA_SUCCESS);
    CU_CHECK(launchStamp(lab, words, 1, blocking.get()));
    CUstreamCaptureStatus legacy = CU_STREAM_CAPTURE_STATUS_NONE;
    CHECK(cuStreamIsCapturing(CU_STREAM_LEGACY, &legacy) == CUDA_ERROR_STREAM_CAPTURE_IMPLICIT);
    CHECK(statusOf(blocking.get()) == CU_STREAM_CAPTURE_STATUS_ACTIVE);
    Graph g;
    CHECK(cuStreamEndCapture(blocking.get(), g.out()) == CUDA_SUCCESS);
    CHECK(g.get() != nullptr);
  }

  TEST_CASE("cuMemAlloc succeeds and the capture stays ACTIVE in a RELAXED capture, and in a GLOBAL one while cuThreadExchangeStreamCaptureMode has the thread in RELAXED mode") {
    Lab lab;
    for (bool relaxThread : {false, true}) {
      CAPTURE(relaxThread);
      wb::PinnedWords words(2);
      Stream s;
      REQUIRE(cuStreamBeginCapture(s.get(), relaxThread ? CU_STREAM_CAPTURE_MODE_GLOBAL
                                                         : CU_STREAM_CAPTURE_MODE_RELAXED) == CUDA_SUCCESS);
      CU_CHECK(launchStamp(lab, words, 1, s.get()));
      CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
      if (relaxThread) {
        REQUIRE(cuThreadExchangeStreamCaptureMode(&mode) == CUDA_SUCCESS);
        CHECK(mode == CU_STREAM_CAPTURE_MODE_GLOBAL);  // a thread's mode by default
      }
      CUdeviceptr p = 0;
      const CUresult rc = cuMemAlloc(&p, 4096);
      if (relaxThread) {
        REQUIRE(cuThreadExchangeStreamCaptureMode(&mode) == CUDA_SUCCESS);
        CHECK(mode == CU_STREAM_CAPTURE_MODE_RELAXED);  // what the first exchange set
      }
      CHECK(rc == CUDA_SUCCESS);
      CHECK(statusOf(s.get()) == CU_STREAM_CAPTURE_STATUS_ACTIVE);
      Graph g;
      CHECK(cuStreamEndCapture(s.get(), g.out()) == CUDA_SUCCESS);
      CHECK(g.get() != nullptr);
      if (rc == CUDA_SUCCESS) CU_CHECK(cuMemFree(p));  // after the capture: cuMemFree may synchronise
    }
  }

  TEST_CASE("a GLOBAL or THREAD_LOCAL capture ended from another thread is refused with CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD; a RELAXED one may be ended there") {
    Lab lab;
    for (CUstreamCaptureMode mode : {CU_STREAM_CAPTURE_MODE_GLOBAL, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL,
                                     CU_STREAM_CAPTURE_MODE_RELAXED}) {
      const int m = static_cast<int>(mode);
      CAPTURE(m);
      wb::PinnedWords words(2);
      Stream s;
      REQUIRE(cuStreamBeginCapture(s.get(), mode) == CUDA_SUCCESS);
      CU_CHECK(launchStamp(lab, words, 1, s.get()));
      CUresult elsewhere = CUDA_ERROR_UNKNOWN;
      CUgraph fromThere = nullptr;
      std::thread other([&] {
        if (cuCtxSetCurrent(lab.ctx()) == CUDA_SUCCESS) elsewhere = cuStreamEndCapture(s.get(), &fromThere);
      });
      other.join();
      Graph g(fromThere);
      if (mode == CU_STREAM_CAPTURE_MODE_RELAXED) {
        CHECK(elsewhere == CUDA_SUCCESS);
        CHECK(g.get() != nullptr);
      } else {
        CHECK(elsewhere == CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD);
        Graph here;
        const CUresult ended = cuStreamEndCapture(s.get(), here.out());  // this thread's end, whatever it says
        const std::string name = wb::errorName(ended);
        CAPTURE(name);
      }
      CHECK(statusOf(s.get()) == CU_STREAM_CAPTURE_STATUS_NONE);
    }
  }

  TEST_CASE("even in a RELAXED capture, querying an event recorded in the capture is refused") {
    Lab lab;
    wb::PinnedWords words(2);
    Stream s;
    CUevent event = nullptr;
    CU_CHECK(cuEventCreate(&event, CU_EVENT_DISABLE_TIMING));
    REQUIRE(cuStreamBeginCapture(s.get(), CU_STREAM_CAPTURE_MODE_RELAXED) == CUDA_SUCCESS);
    CU_CHECK(launchStamp(lab, words, 1, s.get()));
    CU_CHECK(cuEventRecord(event, s.get()));
    const CUresult rc = cuEventQuery(event);
    const std::string name = wb::errorName(rc);
    CAPTURE(name);
    CHECK(rc != CUDA_SUCCESS);
    Graph g;
    cuStreamEndCapture(s.get(), g.out());
    CHECK(statusOf(s.get()) == CU_STREAM_CAPTURE_STATUS_NONE);
    CU_CHECK(cuEventDestroy(event));
  }
}

TEST_SUITE("set-params") {
  TEST_CASE("cuGraphExecKernelNodeSetParams applies to later launches only: a launch already pending keeps its arguments, the graph's node keeps its own, and the executable graph is the same") {
    Lab lab;
    constexpr unsigned n = 1024;
    wbt::DeviceBuffer data(n * sizeof(float));
    wbt::setWords(data.get(), 0, n);
    Stream s;
    Graph g = captured(s.get(), [&](CUstream cs) { launchAxpb(lab, data.get(), n, 1.0f, 1.0f, cs); });
    const std::vector<CUgraphNode> nodes = nodesOf(g.get());
    REQUIRE(nodes.size() == 1);
    Exec exec(g.get());
    const CUgraphExec before = exec.get();
    CUDA_KERNEL_NODE_PARAMS params{};
    REQUIRE(cuGraphKernelNodeGetParams(nodes[0], &params) == CUDA_SUCCESS);
    CHECK(argument<float>(params, 3) == 1.0f);
    CUdeviceptr p = data.get();
    unsigned count = n;
    float a = 1.0f, b = 100.0f;
    void* args[] = {&p, &count, &a, &b};
    params.kernelParams = args;
    params.extra = nullptr;
    {
      wb::Gate gate(lab.gate, s.get());
      CHECK(cuGraphLaunch(exec.get(), s.get()) == CUDA_SUCCESS);
      CHECK(cuGraphExecKernelNodeSetParams(exec.get(), nodes[0], &params) == CUDA_SUCCESS);
      CHECK(gate.outcome() == wb::Gate::Waiting);  // the first launch was pending during the update
      CHECK(cuGraphLaunch(exec.get(), s.get()) == CUDA_SUCCESS);
      gate.open();
      s.sync();
    }
    CHECK(firstFloat(data.get()) == 101.0f);  // 0 + 1 (the pending launch) + 100 (the next)
    CUDA_KERNEL_NODE_PARAMS own{};
    REQUIRE(cuGraphKernelNodeGetParams(nodes[0], &own) == CUDA_SUCCESS);
    CHECK(argument<float>(own, 3) == 1.0f);
    CHECK(exec.get() == before);
    exec.run(s.get());
    CHECK(firstFloat(data.get()) == 201.0f);
  }
}

TEST_SUITE("update") {
  TEST_CASE("cuGraphExecUpdate from a capture of the same sequence with other arguments succeeds, and the next launch uses them") {
    Lab lab;
    constexpr unsigned n = 1024;
    wbt::DeviceBuffer data(n * sizeof(float));
    Stream s;
    Graph first = captured(s.get(), [&](CUstream cs) { launchAxpb(lab, data.get(), n, 0.0f, 1.0f, cs); });
    Exec exec(first.get());
    exec.run(s.get());
    CHECK(firstFloat(data.get()) == 1.0f);
    Graph second = captured(s.get(), [&](CUstream cs) { launchAxpb(lab, data.get(), n, 0.0f, 2.0f, cs); });
    CUgraphExecUpdateResultInfo info{};
    info.result = CU_GRAPH_EXEC_UPDATE_ERROR;
    CHECK(cuGraphExecUpdate(exec.get(), second.get(), &info) == CUDA_SUCCESS);
    CHECK(info.result == CU_GRAPH_EXEC_UPDATE_SUCCESS);
    exec.run(s.get());
    CHECK(firstFloat(data.get()) == 2.0f);
  }

  TEST_CASE("cuGraphExecUpdate refuses a capture with one kernel more: CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE, CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED and no error node") {
    Lab lab;
    constexpr unsigned n = 1024;
    wbt::DeviceBuffer data(n * sizeof(float));
    Stream s;
    Graph one = captured(s.get(), [&](CUstream cs) { launchAxpb(lab, data.get(), n, 0.0f, 1.0f, cs); });
    Exec exec(one.get());
    Graph two = captured(s.get(), [&](CUstream cs) {
      launchAxpb(lab, data.get(), n, 0.0f, 1.0f, cs);
      launchAxpb(lab, data.get(), n, 1.0f, 1.0f, cs);
    });
    CUgraphExecUpdateResultInfo info{};
    CHECK(cuGraphExecUpdate(exec.get(), two.get(), &info) == CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE);
    CHECK(info.result == CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED);
    CHECK(info.errorNode == nullptr);  // the reference: the node counts differ, so no node is named
  }

  TEST_CASE("cuGraphExecUpdate refuses a graph whose kernel node became a memset: CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED, naming that node") {
    Lab lab;
    constexpr unsigned n = 1024;
    wbt::DeviceBuffer data(n * sizeof(float));
    Stream s;
    Graph kernel = captured(s.get(), [&](CUstream cs) { launchAxpb(lab, data.get(), n, 0.0f, 1.0f, cs); });
    Exec exec(kernel.get());
    Graph memset = captured(s.get(), [&](CUstream cs) { CU_CHECK(cuMemsetD32Async(data.get(), 0, n, cs)); });
    const std::vector<CUgraphNode> nodes = nodesOf(memset.get());
    REQUIRE(nodes.size() == 1);
    CUgraphExecUpdateResultInfo info{};
    CHECK(cuGraphExecUpdate(exec.get(), memset.get(), &info) == CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE);
    CHECK(info.result == CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED);
    CHECK(info.errorNode == nodes[0]);
  }

  TEST_CASE("new arguments for one executable graph leave another executable graph of the same graph unchanged") {
    Lab lab;
    constexpr unsigned n = 1024;
    wbt::DeviceBuffer data(n * sizeof(float));
    Stream s;
    Graph g = captured(s.get(), [&](CUstream cs) { launchAxpb(lab, data.get(), n, 0.0f, 1.0f, cs); });
    const std::vector<CUgraphNode> nodes = nodesOf(g.get());
    REQUIRE(nodes.size() == 1);
    Exec changed(g.get()), untouched(g.get());
    CUDA_KERNEL_NODE_PARAMS params{};
    REQUIRE(cuGraphKernelNodeGetParams(nodes[0], &params) == CUDA_SUCCESS);
    CUdeviceptr p = data.get();
    unsigned count = n;
    float a = 0.0f, b = 7.0f;
    void* args[] = {&p, &count, &a, &b};
    params.kernelParams = args;
    params.extra = nullptr;
    REQUIRE(cuGraphExecKernelNodeSetParams(changed.get(), nodes[0], &params) == CUDA_SUCCESS);
    changed.run(s.get());
    CHECK(firstFloat(data.get()) == 7.0f);
    untouched.run(s.get());
    CHECK(firstFloat(data.get()) == 1.0f);
  }
}

TEST_SUITE("hand-built") {
  // C depends on A (the gate) and B. The graph is asked for C's dependencies; then, launched, the host
  // waits for B's stamp before it reads C's: with B done, a C still at 0 is held by the edge from A
  // alone (read right after the launch, it could be 0 only because B had not run yet). Whether B runs
  // beside the waiting gate at all is the scheduler's choice: where it did not within 2 s, the case
  // says so, and the edge from A is shown by the graph's structure and the order after the gate opens.
  TEST_CASE("a kernel node runs only after all of its dependencies, and a host node only after its own") {
    Lab lab;
    wb::PinnedWords words(5);  // [0] gate, [1] its outcome, [2] stamp counter, [3] B's slot, [4] C's slot
    CUdeviceptr gateWord = words.device(0), outcome = words.device(1), counter = words.device(2),
                slotB = words.device(3), slotC = words.device(4);
    unsigned long long deadlineNs = 10'000'000'000ull;
    void* gateArgs[] = {&gateWord, &deadlineNs, &outcome};
    void* stampB[] = {&counter, &slotB};
    void* stampC[] = {&counter, &slotC};
    std::atomic<bool> hostRan{false};
    Graph g = Graph::created();
    const CUgraphNode a = addKernel(g.get(), lab.gate, gateArgs, {});
    const CUgraphNode b = addKernel(g.get(), lab.stamp, stampB, {});
    const CUgraphNode c = addKernel(g.get(), lab.stamp, stampC, {a, b});
    CUDA_HOST_NODE_PARAMS host{};
    host.fn = markDone;
    host.userData = &hostRan;
    CUgraphNode d = nullptr;
    REQUIRE(cuGraphAddHostNode(&d, g.get(), &c, 1, &host) == CUDA_SUCCESS);
    const std::vector<CUgraphNode> ofC = dependenciesOf(c), ofD = dependenciesOf(d);
    CHECK(ofC.size() == 2);
    CHECK(std::count(ofC.begin(), ofC.end(), a) == 1);
    CHECK(std::count(ofC.begin(), ofC.end(), b) == 1);
    CHECK(ofD == std::vector<CUgraphNode>{c});
    Exec exec(g.get());
    Stream s;
    REQUIRE(cuGraphLaunch(exec.get(), s.get()) == CUDA_SUCCESS);
    const bool bEarly = waitForWord(words, 3, 2000);
    const unsigned cEarly = words.read(4), gateEarly = words.read(1);
    const bool hostEarly = hostRan.load();
    words.write(0, 1);  // open the gate before any assertion can end the test
    s.sync();
    if (!bEarly) MESSAGE("B did not run beside the waiting gate within 2 s: C's wait is shown by the graph and the order only");
    CHECK(gateEarly == static_cast<unsigned>(wb::Gate::Waiting));  // A had not ended when C was read
    CHECK(cEarly == 0);
    CHECK_FALSE(hostEarly);
    CHECK(words.read(1) == static_cast<unsigned>(wb::Gate::Released));
    CHECK(words.read(3) == 1);  // B
    CHECK(words.read(4) == 2);  // C, after B
    CHECK(hostRan.load());
  }

  TEST_CASE("cuGraphKernelNodeGetParams returns what cuGraphAddKernelNode was given: function, shape and argument values") {
    Lab lab;
    wb::PinnedWords words(2);
    CUdeviceptr counter = words.device(0), slot = words.device(1);
    void* args[] = {&counter, &slot};
    Graph g = Graph::created();
    const CUgraphNode node = addKernel(g.get(), lab.stamp, args, {});
    slot = 0;  // the call copied the values: changing them now changes nothing
    CUDA_KERNEL_NODE_PARAMS got{};
    REQUIRE(cuGraphKernelNodeGetParams(node, &got) == CUDA_SUCCESS);
    CHECK(got.func == lab.stamp);
    CHECK(got.gridDimX == 1);
    CHECK(got.blockDimX == 1);
    CHECK(argument<CUdeviceptr>(got, 0) == words.device(0));
    CHECK(argument<CUdeviceptr>(got, 1) == words.device(1));
    Exec exec(g.get());
    Stream s;
    exec.run(s.get());
    CHECK(words.read(1) == 1);
  }
}

TEST_SUITE("conditional") {
  TEST_CASE("a WHILE node runs its body until a kernel in it clears the condition: one launch, as many iterations as device memory asks for") {
    Lab lab;
#if CUDA_VERSION >= 12040
    wbt::DeviceBuffer words(2 * sizeof(unsigned));
    CUdeviceptr count = words.get(), limit = words.get() + sizeof(unsigned);
    Graph g = Graph::created();
    CUgraphConditionalHandle condition = 0;
    REQUIRE(cuGraphConditionalHandleCreate(&condition, g.get(), lab.ctx(), 1, CU_GRAPH_COND_ASSIGN_DEFAULT) ==
            CUDA_SUCCESS);
    CUgraphNodeParams loop{};
    loop.type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
    loop.conditional.handle = condition;
    loop.conditional.type = CU_GRAPH_COND_TYPE_WHILE;
    loop.conditional.size = 1;
    loop.conditional.ctx = lab.ctx();
    CUgraphNode node = nullptr;
    REQUIRE(wb::graphAddNode(&node, g.get(), nullptr, 0, &loop) == CUDA_SUCCESS);
    void* args[] = {&count, &limit, &condition};
    addKernel(loop.conditional.phGraph_out[0], lab.loopBody, args, {});
    Exec exec(g.get());
    Stream s;
    for (unsigned want : {1u, 5u, 12u}) {
      CAPTURE(want);
      CU_CHECK(cuMemsetD32Async(count, 0, 1, s.get()));
      CU_CHECK(cuMemcpyHtoDAsync(limit, &want, sizeof want, s.get()));
      exec.run(s.get());
      CHECK(firstWord(count) == want);
    }
#else
    wbt::skipCase("conditional nodes: this build's CUDA is older than 12.4");
#endif
  }

  TEST_CASE("an IF node runs its body when the condition, here its default value at launch, is non-zero, and skips it when it is 0") {
    Lab lab;
#if CUDA_VERSION >= 12040
    for (unsigned value : {0u, 1u}) {
      CAPTURE(value);
      wbt::DeviceBuffer counter(sizeof(unsigned));
      wbt::setWords(counter.get(), 0, 1);
      Graph g = Graph::created();
      CUgraphConditionalHandle condition = 0;
      REQUIRE(cuGraphConditionalHandleCreate(&condition, g.get(), lab.ctx(), value, CU_GRAPH_COND_ASSIGN_DEFAULT) ==
              CUDA_SUCCESS);
      CUgraphNodeParams branch{};
      branch.type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
      branch.conditional.handle = condition;
      branch.conditional.type = CU_GRAPH_COND_TYPE_IF;
      branch.conditional.size = 1;
      branch.conditional.ctx = lab.ctx();
      CUgraphNode node = nullptr;
      REQUIRE(wb::graphAddNode(&node, g.get(), nullptr, 0, &branch) == CUDA_SUCCESS);
      CUdeviceptr p = counter.get();
      void* args[] = {&p};
      addKernel(branch.conditional.phGraph_out[0], lab.tick, args, {});
      Exec exec(g.get());
      Stream s;
      exec.run(s.get());
      CHECK(firstWord(counter.get()) == value);
    }
#else
    wbt::skipCase("conditional nodes: this build's CUDA is older than 12.4");
#endif
  }
}

TEST_SUITE("launch-cost") {
  TEST_CASE("for 1024 short kernels, one graph launch costs the host less per kernel than 1024 stream launches, to submit and until done") {
    Lab lab;
    constexpr unsigned n = 1024;
    wbt::DeviceBuffer counter(sizeof(unsigned));
    CUdeviceptr p = counter.get();
    void* args[] = {&p};
    Stream s;
    const auto submitTicks = [&](CUstream cs) {
      for (unsigned i = 0; i < n; ++i) CU_CHECK(cuLaunchKernel(lab.tick, 1, 1, 1, 1, 1, 1, 0, cs, args, nullptr));
    };
    Graph g = captured(s.get(), submitTicks);
    Exec exec(g.get());
    CU_CHECK(cuMemsetD32Async(p, 0, 1, s.get()));
    s.sync();
    std::vector<double> streamSubmit, graphSubmit, streamDone, graphDone;
    for (int rep = 0; rep < 9; ++rep) {
      const wb::Stopwatch t;
      submitTicks(s.get());
      const double submitted = t.ms();
      s.sync();
      const double done = t.ms();
      const wb::Stopwatch u;
      CU_CHECK(cuGraphLaunch(exec.get(), s.get()));
      const double launched = u.ms();
      s.sync();
      const double graphDoneMs = u.ms();
      if (rep < 2) continue;
      streamSubmit.push_back(submitted), streamDone.push_back(done);
      graphSubmit.push_back(launched), graphDone.push_back(graphDoneMs);
    }
    CHECK(firstWord(p) == 2u * 9u * n);  // every tick ran, both ways
    MESSAGE("per kernel, microseconds: stream submit " << median(streamSubmit) * 1000 / n << ", graph submit "
            << median(graphSubmit) * 1000 / n << ", stream done " << median(streamDone) * 1000 / n
            << ", graph done " << median(graphDone) * 1000 / n);
    CHECK(median(graphSubmit) < median(streamSubmit));
    CHECK(median(graphDone) < median(streamDone));
  }
}

TEST_SUITE("damaged-images") {
  TEST_CASE("pointed at an empty folder or at damaged images, the program stops in seconds, naming the file") {
    wbt::checkProgramRefusesDamagedImages(WORKBOOK_LESSON_PROGRAM);
  }
}
