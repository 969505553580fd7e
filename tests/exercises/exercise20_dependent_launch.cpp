// The checks of lesson 20's exercises (lessons/20-dependent-launch/exercises.cpp). What a launch or a
// node means is read from the graph a capture makes of it (its edges' edge data, a node's
// parameters, a node's dependencies), which the reference documents: no timing decides anything.
// Stream order is shown with the gate kernel (common/gate.hpp), failure paths with the ledger's
// FailCall (tests/exercises/ledger.hpp). Every check needs compute capability 9.0 (programmatic
// dependent launch), the second and third CUDA 12.3 (edge data), and says skipped elsewhere. Each
// case's name begins with the requirements it verifies.
#include "check.hpp"
#include "gate.hpp"
#include "20-dependent-launch/exercises.hpp"
#include "graph_handles.hpp"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

// The edge-data calls through the ledger, so that a check can make them fail (ledger.cpp does not
// stand before them). The versioned names are the symbols both CUDA 12.3+ and 13.x call.
#if CUDA_VERSION >= 12030
WBX_INTERPOSE(cuGraphGetEdges_v2, (CUgraph g, CUgraphNode* from, CUgraphNode* to, CUgraphEdgeData* data, size_t* n),
              (g, from, to, data, n))
WBX_INTERPOSE(cuStreamGetCaptureInfo_v3,
              (CUstream s, CUstreamCaptureStatus* status, cuuint64_t* id, CUgraph* graph, const CUgraphNode** deps,
               const CUgraphEdgeData** data, size_t* n),
              (s, status, id, graph, deps, data, n))
WBX_INTERPOSE(cuStreamUpdateCaptureDependencies_v2,
              (CUstream s, CUgraphNode* deps, const CUgraphEdgeData* data, size_t n, unsigned flags),
              (s, deps, data, n, flags))
#endif

namespace {

using wbt::Graph;
using wbt::Exec;

using wbt::functionOf;
using wbt::Stream;

// The primary context of device 0, current, and the kernels the checks launch, each loaded (and run
// once) before any gate closes (lesson 09).
struct Lab {
  wbt::RetainedPrimary primary{(wbt::initDriver(), wbt::device(0))};
  wbt::Pushed current{primary.get()};
  CUlibrary streams = nullptr, dependent = nullptr;
  CUfunction gate = nullptr, burn = nullptr, chainLink = nullptr;
  Lab() {
    const int major = wbt::attribute(wbt::device(0), CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
    if (major < 9)
      throw wbx::Skipped("device 0 has compute capability " + std::to_string(major) +
                         ".x: programmatic dependent launch needs 9.0 or newer");
    CU_CHECK(cuLibraryLoadFromFile(&streams, wb::verifiedImagePath("streams.fatbin").c_str(), nullptr, nullptr, 0,
                                   nullptr, nullptr, 0));
    CU_CHECK(cuLibraryLoadFromFile(&dependent, wb::verifiedImagePath("dependent_launch.fatbin").c_str(), nullptr,
                                   nullptr, 0, nullptr, nullptr, 0));
    wb::StreamKernels::load(streams);
    gate = functionOf(streams, "gate");
    burn = functionOf(streams, "burn");
    chainLink = functionOf(dependent, "chain_link");
    wbt::DeviceBuffer scratch(4 * sizeof(unsigned long long));
    CUdeviceptr value = scratch.get(), times = scratch.get() + 8;
    unsigned index = 0, work = 0;
    void* args[] = {&value, &times, &index, &work};
    CU_CHECK(cuLaunchKernel(chainLink, 1, 1, 1, 1, 1, 1, 0, nullptr, args, nullptr));
    CU_CHECK(cuCtxSynchronize());
  }
  ~Lab() {
    cuLibraryUnload(dependent);
    cuLibraryUnload(streams);
  }
};

void requireEdgeData() {
#if CUDA_VERSION < 12030
  throw wbx::Skipped("built with CUDA " + std::to_string(CUDA_VERSION) + ": edge data needs 12.3 or newer");
#endif
}

// Arguments of chain_link (kernels/dependent_launch.cu): link `index` adds 1 to *value; kept alive
// for as long as a launch or node may copy them.
struct LinkArgs {
  CUdeviceptr value, times;
  unsigned index, work = 64;
  void* args[4] = {&value, &times, &index, &work};
  LinkArgs(CUdeviceptr v, CUdeviceptr t, unsigned i) : value(v), times(t), index(i) {}
  LinkArgs(const LinkArgs&) = delete;
  LinkArgs& operator=(const LinkArgs&) = delete;
};

// The check's own plain launch of one chain link.
void launchLink(const Lab& lab, LinkArgs& a, CUstream s) {
  CU_CHECK(cuLaunchKernel(lab.chainLink, 1, 1, 1, 1, 1, 1, 0, s, a.args, nullptr));
}



std::vector<CUgraphNode> nodesOf(CUgraph graph) {
  size_t n = 0;
  CU_CHECK(cuGraphGetNodes(graph, nullptr, &n));
  std::vector<CUgraphNode> nodes(n);
  if (n) CU_CHECK(cuGraphGetNodes(graph, nodes.data(), &n));
  nodes.resize(n);
  return nodes;
}

// Ends a capture the check began (the code under check may have thrown in its middle).
void endOwnCapture(CUstream s, Graph& out) {
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  if (cuStreamIsCapturing(s, &status) == CUDA_SUCCESS && status != CU_STREAM_CAPTURE_STATUS_NONE)
    cuStreamEndCapture(s, &out.g);
}

#if CUDA_VERSION >= 12030
// The driver's own list of a graph's edges: the reference the learner's list is compared with.
std::vector<ex20::Edge> driverEdges(CUgraph graph) {
  size_t n = 0;
  CU_CHECK(cuGraphGetEdges_v2(graph, nullptr, nullptr, nullptr, &n));
  std::vector<CUgraphNode> from(n), to(n);
  std::vector<CUgraphEdgeData> data(n);
  if (n) CU_CHECK(cuGraphGetEdges_v2(graph, from.data(), to.data(), data.data(), &n));
  std::vector<ex20::Edge> edges;
  for (size_t i = 0; i < n; ++i) edges.push_back({from[i], to[i], data[i].from_port, data[i].to_port, data[i].type});
  return edges;
}

// A node's dependencies with their edge data.
struct Dependency {
  CUgraphNode node;
  CUgraphEdgeData data;
};
std::vector<Dependency> dependenciesOf(CUgraphNode node) {
  size_t n = 0;
  CU_CHECK(cuGraphNodeGetDependencies_v2(node, nullptr, nullptr, &n));
  std::vector<CUgraphNode> nodes(n);
  std::vector<CUgraphEdgeData> data(n);
  if (n) CU_CHECK(cuGraphNodeGetDependencies_v2(node, nodes.data(), data.data(), &n));
  std::vector<Dependency> out;
  for (size_t i = 0; i < n; ++i) out.push_back({nodes[i], data[i]});
  return out;
}

bool isDefault(const CUgraphEdgeData& d) { return d.type == 0 && d.from_port == 0 && d.to_port == 0; }

// The stream's current capture dependencies, as the check sees them.
std::vector<CUgraphNode> captureDependencies(CUstream s) {
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  const CUgraphNode* deps = nullptr;
  const CUgraphEdgeData* data = nullptr;
  size_t n = 0;
  CU_CHECK(cuStreamGetCaptureInfo_v3(s, &status, nullptr, nullptr, &deps, &data, &n));
  return std::vector<CUgraphNode>(deps, deps + n);
}

std::string describe(const std::vector<ex20::Edge>& edges) {
  std::string out;
  for (const ex20::Edge& e : edges)
    out += "[type " + std::to_string(e.type) + " ports " + std::to_string(e.fromPort) + "->" +
           std::to_string(e.toPort) + "] ";
  return out.empty() ? "none" : out;
}

bool sameEdges(const std::vector<ex20::Edge>& a, const std::vector<ex20::Edge>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].from != b[i].from || a[i].to != b[i].to || a[i].fromPort != b[i].fromPort ||
        a[i].toPort != b[i].toPort || a[i].type != b[i].type)
      return false;
  return true;
}
#endif

float readFloat(CUdeviceptr p) {
  float v = 0;
  CU_CHECK(cuMemcpyDtoH(&v, p, sizeof v));
  return v;
}

}  // namespace

EXERCISE("dependent-launch", "Launch a kernel as a programmatic dependent of the one before it",
         "CUlaunchAttribute a{}; a.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION; "
         "a.value.programmaticStreamSerializationAllowed = 1; then a zeroed CUlaunchConfig with gridDimX = blocks, "
         "blockDimX = threads, the other dimensions 1, hStream = stream, attrs = &a, numAttrs = 1, and "
         "CU_CHECK(cuLaunchKernelEx(&config, f, args, nullptr)).") {
  TEST_CASE("R1 R2: captured behind a plain launch, the launch is a kernel node of the shape asked for, on a programmatic edge, and runs over what its arguments name") {
    Lab lab;
    constexpr unsigned n = 1000, total = 2048;
    wbt::DeviceBuffer data(total * sizeof(float)), value(sizeof(unsigned)), times(8 * sizeof(unsigned long long));
    wbt::setWords(data.get(), 0x40000000u, total);  // 2.0f everywhere
    Stream s;
    LinkArgs first(value.get(), times.get(), 0);
    CUdeviceptr d = data.get();
    unsigned count = n, rounds = 3;
    void* args[] = {&d, &count, &rounds};
    Graph g;
    CU_CHECK(cuStreamBeginCapture(s.get(), CU_STREAM_CAPTURE_MODE_GLOBAL));
    launchLink(lab, first, s.get());
    try {
      ex20::launchDependent(lab.burn, 3, 64, args, s.get());
    } catch (...) {
      endOwnCapture(s.get(), g);
      throw;
    }
    REQUIRE(cuStreamEndCapture(s.get(), &g.g) == CUDA_SUCCESS);
    const std::vector<CUgraphNode> nodes = nodesOf(g.g);
    REQUIRE_MESSAGE(nodes.size() == 2, "the capture holds another number of kernels than 2: launch in the stream given");
#if CUDA_VERSION >= 12030
    const std::vector<ex20::Edge> edges = driverEdges(g.g);
    REQUIRE(edges.size() == 1);
    CAPTURE(describe(edges));
    CHECK_MESSAGE(edges[0].type == CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC,
                  "the edge to your launch is a plain one: set the attribute's value to 1 and count it in numAttrs");
    CHECK(edges[0].fromPort == CU_GRAPH_KERNEL_NODE_PORT_PROGRAMMATIC);
    CUDA_KERNEL_NODE_PARAMS p{};
    REQUIRE(cuGraphKernelNodeGetParams(edges[0].to, &p) == CUDA_SUCCESS);
    CHECK_MESSAGE((p.gridDimX == 3 && p.gridDimY == 1 && p.gridDimZ == 1), "another grid than 3 x 1 x 1 blocks");
    CHECK_MESSAGE((p.blockDimX == 64 && p.blockDimY == 1 && p.blockDimZ == 1), "another block than 64 x 1 x 1 threads");
    CHECK(p.sharedMemBytes == 0);
#endif
    Exec exec(g.g);
    CU_CHECK(cuGraphLaunch(exec.e, s.get()));
    s.sync();
    std::vector<float> after(total);
    CU_CHECK(cuMemcpyDtoH(after.data(), data.get(), total * sizeof(float)));
    size_t untouched = 0, changed = 0;
    for (unsigned i = 0; i < total; ++i) {
      if (i < n)
        changed += after[i] != 2.0f;
      else
        untouched += after[i] == 2.0f;
    }
    CHECK_MESSAGE(changed == n, "the kernel did not run over the elements its arguments name");
    CHECK_MESSAGE(untouched == total - n, "the kernel ran past the elements its arguments name");
  }

  TEST_CASE("R1 R3: in the stream given, behind the work there, without waiting: behind a closed gate the kernel has not run when the call returns, runs once it opens, and nothing is held") {
    Lab lab;
    constexpr unsigned n = 512;
    wbt::DeviceBuffer data(n * sizeof(float));
    wbt::setWords(data.get(), 0x40000000u, n);
    Stream s;
    CUdeviceptr d = data.get();
    unsigned count = n, rounds = 2;
    void* args[] = {&d, &count, &rounds};
    const bool gated = !wb::underSanitizer();  // compute-sanitizer ran no kernel beside a waiting one (lesson 09)
    const wbx::Holdings before = wbx::holdings();
    bool ranEarly = false;
    wb::Gate::Outcome seen = wb::Gate::TimedOut;
    {
      std::unique_ptr<wb::Gate> gate;
      if (gated) gate = std::make_unique<wb::Gate>(lab.gate, s.get(), 2.0);  // a call that waits, waits 2 s at most
      const wbx::Holdings gateHeld = wbx::holdings();
      ex20::launchDependent(lab.burn, 2, 128, args, s.get());
      const std::string left = wbx::holdings().differenceFrom(gateHeld);
      CAPTURE(left);
      CHECK_MESSAGE(left.empty(), "launchDependent left something held");
      if (gate) {
        seen = gate->outcome();
        CU_CHECK(cuStreamSynchronize(CU_STREAM_LEGACY));  // a launch into the legacy stream has run by now
        ranEarly = readFloat(data.get()) != 2.0f;
        gate->open();
      }
    }
    s.sync();
    if (gated) {
      CHECK_MESSAGE(seen == wb::Gate::Waiting, "launchDependent waited for the stream: it only enqueues");
      CHECK_MESSAGE(!ranEarly, "the kernel ran before the work already in the stream: launch it in the stream given");
    }
    CHECK_MESSAGE(readFloat(data.get()) != 2.0f, "the kernel never ran");
    const std::string left = wbx::holdings().differenceFrom(before);
    CAPTURE(left);
    CHECK(left.empty());
  }

  TEST_CASE("R4: a launch the driver refuses throws wb::DriverError, and so does a cuLaunchKernelEx that fails with CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, with that code") {
    Lab lab;
    wbt::DeviceBuffer data(64 * sizeof(float));
    Stream s;
    CUdeviceptr d = data.get();
    unsigned count = 64, rounds = 1;
    void* args[] = {&d, &count, &rounds};
    bool refusedThrew = false;
    try {
      ex20::launchDependent(lab.burn, 1, 2048, args, s.get());  // more threads per block than any device has
    } catch (const wb::DriverError&) {
      refusedThrew = true;
    }
    CHECK_MESSAGE(refusedThrew, "a launch of 2048 threads per block was refused and launchDependent did not throw");
    bool fired = false;
    CUresult code = CUDA_SUCCESS;
    {
      wbx::FailCall fail("cuLaunchKernelEx", CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
      try {
        ex20::launchDependent(lab.burn, 1, 64, args, s.get());
      } catch (const wb::DriverError& e) {
        code = e.code();
      }
      fired = fail.fired();
    }
    s.sync();
    CHECK_MESSAGE(fired, "launchDependent did not call cuLaunchKernelEx, which takes the launch attribute");
    if (fired)
      CHECK_MESSAGE(code == CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES,
                    "cuLaunchKernelEx failed and launchDependent did not throw wb::DriverError with its code");
  }
}

EXERCISE("edge-report", "Every edge of a graph, with the edge data that makes it programmatic",
         "size_t n = 0; CU_CHECK(cuGraphGetEdges_v2(graph, nullptr, nullptr, nullptr, &n)); then vectors of n "
         "CUgraphNode (from, to) and n CUgraphEdgeData, and if n > 0 CU_CHECK(cuGraphGetEdges_v2(graph, from.data(), "
         "to.data(), data.data(), &n)); one Edge per index with data[i].from_port, to_port and type. Passing NULL "
         "edge data on a graph with a programmatic edge is CUDA_ERROR_LOSSY_QUERY.") {
  TEST_CASE("R1 R2: a captured dependent launch, and a hand-built graph with default, programmatic and launch-order edges: every edge, in the driver's order, with its data") {
    Lab lab;
    requireEdgeData();
#if CUDA_VERSION >= 12030
    wbt::DeviceBuffer value(sizeof(unsigned)), times(12 * sizeof(unsigned long long));
    Stream s;
    LinkArgs a(value.get(), times.get(), 0), b(value.get(), times.get(), 1);
    Graph captured;
    CU_CHECK(cuStreamBeginCapture(s.get(), CU_STREAM_CAPTURE_MODE_GLOBAL));
    launchLink(lab, a, s.get());
    CUlaunchAttribute attr{};
    attr.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    attr.value.programmaticStreamSerializationAllowed = 1;
    CUlaunchConfig config{};
    config.gridDimX = config.gridDimY = config.gridDimZ = config.blockDimX = config.blockDimY = config.blockDimZ = 1;
    config.hStream = s.get();
    config.attrs = &attr;
    config.numAttrs = 1;
    CU_CHECK(cuLaunchKernelEx(&config, lab.chainLink, b.args, nullptr));
    CU_CHECK(cuStreamEndCapture(s.get(), &captured.g));
    const std::vector<ex20::Edge> want1 = driverEdges(captured.g);
    REQUIRE(want1.size() == 1);
    REQUIRE(want1[0].type == CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC);
    const std::vector<ex20::Edge> got1 = ex20::edgesOf(captured.g);
    CAPTURE(describe(got1));
    CHECK_MESSAGE(sameEdges(got1, want1), "the captured graph's programmatic edge, its nodes or its data differ");

    Graph byHand;
    CU_CHECK(cuGraphCreate(&byHand.g, 0));
    LinkArgs c(value.get(), times.get(), 2), d(value.get(), times.get(), 3);
    CUgraphNode nodes[4] = {};
    LinkArgs* all[4] = {&a, &b, &c, &d};
    for (int i = 0; i < 4; ++i) {
      CUDA_KERNEL_NODE_PARAMS p{};
      p.func = lab.chainLink;
      p.gridDimX = p.gridDimY = p.gridDimZ = p.blockDimX = p.blockDimY = p.blockDimZ = 1;
      p.kernelParams = all[i]->args;
      CU_CHECK(cuGraphAddKernelNode(&nodes[i], byHand.g, nullptr, 0, &p));
    }
    struct Link {
      int from, to;
      unsigned char port, type;
    };
    const Link links[] = {{0, 1, CU_GRAPH_KERNEL_NODE_PORT_DEFAULT, CU_GRAPH_DEPENDENCY_TYPE_DEFAULT},
                          {0, 2, CU_GRAPH_KERNEL_NODE_PORT_PROGRAMMATIC, CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC},
                          {1, 3, CU_GRAPH_KERNEL_NODE_PORT_LAUNCH_ORDER, CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC},
                          {2, 3, CU_GRAPH_KERNEL_NODE_PORT_DEFAULT, CU_GRAPH_DEPENDENCY_TYPE_DEFAULT}};
    for (const Link& l : links) {
      CUgraphEdgeData data{};
      data.from_port = l.port;
      data.type = l.type;
      CU_CHECK(cuGraphAddDependencies_v2(byHand.g, &nodes[l.from], &nodes[l.to], &data, 1));
    }
    const std::vector<ex20::Edge> want2 = driverEdges(byHand.g);
    REQUIRE(want2.size() == 4);
    const std::vector<ex20::Edge> got2 = ex20::edgesOf(byHand.g);
    CAPTURE(describe(got2));
    CHECK_MESSAGE(sameEdges(got2, want2), "the hand-built graph's edges, their nodes, order or data differ");
#endif
  }

  TEST_CASE("R2 R3: forty edges (a chain of 41 empty nodes), and graphs of three unconnected nodes and of no node: every edge, and empty lists") {
    Lab lab;
    requireEdgeData();
#if CUDA_VERSION >= 12030
    Graph chain;
    CU_CHECK(cuGraphCreate(&chain.g, 0));
    CUgraphNode previous = nullptr;
    for (int i = 0; i < 41; ++i) {
      CUgraphNode node = nullptr;
      CU_CHECK(cuGraphAddEmptyNode(&node, chain.g, previous ? &previous : nullptr, previous ? 1 : 0));
      previous = node;
    }
    const std::vector<ex20::Edge> want = driverEdges(chain.g);
    REQUIRE(want.size() == 40);
    const std::vector<ex20::Edge> got = ex20::edgesOf(chain.g);
    CHECK_MESSAGE(got.size() == 40, "another number of edges than 40: ask for the count first, then for that many");
    CHECK_MESSAGE(sameEdges(got, want), "the chain's edges differ from the driver's");
    Graph apart;  // nodes, but no edge between them
    CU_CHECK(cuGraphCreate(&apart.g, 0));
    for (int i = 0; i < 3; ++i) {
      CUgraphNode node = nullptr;
      CU_CHECK(cuGraphAddEmptyNode(&node, apart.g, nullptr, 0));
    }
    CHECK_MESSAGE(ex20::edgesOf(apart.g).empty(), "a graph of three nodes without an edge gave edges");
    Graph empty;
    CU_CHECK(cuGraphCreate(&empty.g, 0));
    CHECK_MESSAGE(ex20::edgesOf(empty.g).empty(), "a graph without edges gave edges");
#endif
  }

  TEST_CASE("R2 R4: a query that fails, the count or the edges, throws wb::DriverError") {
    Lab lab;
    requireEdgeData();
#if CUDA_VERSION >= 12030
    Graph g;
    CU_CHECK(cuGraphCreate(&g.g, 0));
    CUgraphNode first = nullptr, second = nullptr;
    CU_CHECK(cuGraphAddEmptyNode(&first, g.g, nullptr, 0));
    CU_CHECK(cuGraphAddEmptyNode(&second, g.g, &first, 1));
    for (unsigned nth : {1u, 2u}) {
      CAPTURE(nth);
      bool threw = false, fired = false;
      {
        wbx::FailCall fail("cuGraphGetEdges_v2", CUDA_ERROR_INVALID_VALUE, nth);
        try {
          ex20::edgesOf(g.g);
        } catch (const wb::DriverError&) {
          threw = true;
        }
        fired = fail.fired();
      }
      CHECK_MESSAGE(fired, "edgesOf did not call cuGraphGetEdges_v2 twice, for the count and then for the edges");
      if (fired) CHECK_MESSAGE(threw, "cuGraphGetEdges_v2 failed and edgesOf did not throw wb::DriverError");
    }
#endif
  }
}

EXERCISE("capture-append", "A node added by hand to a caller's capture, keeping its edge data",
         "cuStreamGetCaptureInfo_v3(stream, &status, nullptr, &graph, &deps, &data, &n); status not ACTIVE: "
         "wb::throwDriverError(CUDA_ERROR_ILLEGAL_STATE, ...). Copy deps and data (valid until the next call on the "
         "stream), cuGraphAddKernelNode(&node, graph, nullptr, 0, &params), then cuGraphAddDependencies_v2(graph, "
         "deps, tos, data, n) with every `to` the node, then cuStreamUpdateCaptureDependencies_v2(stream, &node, "
         "nullptr, 1, CU_STREAM_SET_CAPTURE_DEPENDENCIES).") {
  TEST_CASE("R1 R2 R3: after a programmatic dependency: your node, one block of one thread, depends on it alone with that edge data, the stream's next kernel on your node alone, and the graph runs the three in order") {
    Lab lab;
    requireEdgeData();
#if CUDA_VERSION >= 12030
    wbt::DeviceBuffer value(sizeof(unsigned)), times(9 * sizeof(unsigned long long));
    Stream s;
    LinkArgs a(value.get(), times.get(), 0), b(value.get(), times.get(), 1), c(value.get(), times.get(), 2);
    Graph g;
    CU_CHECK(cuStreamBeginCapture(s.get(), CU_STREAM_CAPTURE_MODE_GLOBAL));
    launchLink(lab, a, s.get());
    std::vector<CUgraphNode> deps = captureDependencies(s.get());
    REQUIRE(deps.size() == 1);
    const CUgraphNode first = deps[0];
    CUgraphEdgeData programmatic{};
    programmatic.type = CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC;
    programmatic.from_port = CU_GRAPH_KERNEL_NODE_PORT_PROGRAMMATIC;
    CU_CHECK(cuStreamUpdateCaptureDependencies_v2(s.get(), deps.data(), &programmatic, 1,
                                                  CU_STREAM_SET_CAPTURE_DEPENDENCIES));
    CUgraphNode mine = nullptr;
    try {
      mine = ex20::appendToCapture(s.get(), lab.chainLink, b.args);
      launchLink(lab, c, s.get());
    } catch (...) {
      endOwnCapture(s.get(), g);
      throw;
    }
    deps = captureDependencies(s.get());
    REQUIRE(deps.size() == 1);
    const CUgraphNode last = deps[0];
    REQUIRE(cuStreamEndCapture(s.get(), &g.g) == CUDA_SUCCESS);
    const std::vector<CUgraphNode> nodes = nodesOf(g.g);
    CHECK_MESSAGE(nodes.size() == 3, "the graph holds another number of nodes than the two kernels and yours");
    REQUIRE_MESSAGE(std::count(nodes.begin(), nodes.end(), mine) == 1, "the node returned is not in the captured graph");
    const std::vector<Dependency> ofMine = dependenciesOf(mine), ofLast = dependenciesOf(last);
    REQUIRE_MESSAGE(ofMine.size() == 1, "your node does not depend on the stream's one dependency alone");
    CHECK(ofMine[0].node == first);
    CHECK_MESSAGE(ofMine[0].data.type == CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC,
                  "your node's dependency lost its programmatic edge data: add it with the data the capture gave");
    CHECK(ofMine[0].data.from_port == CU_GRAPH_KERNEL_NODE_PORT_PROGRAMMATIC);
    REQUIRE_MESSAGE(ofLast.size() == 1,
                    "the stream's next kernel depends on more or fewer nodes than yours: set the stream's dependencies "
                    "to your node alone");
    CHECK_MESSAGE(ofLast[0].node == mine, "the stream's next kernel does not depend on your node");
    CHECK(isDefault(ofLast[0].data));
    CUDA_KERNEL_NODE_PARAMS p{};
    REQUIRE(cuGraphKernelNodeGetParams(mine, &p) == CUDA_SUCCESS);
    CHECK_MESSAGE((p.gridDimX == 1 && p.gridDimY == 1 && p.gridDimZ == 1), "your node has another grid than one block");
    CHECK_MESSAGE((p.blockDimX == 1 && p.blockDimY == 1 && p.blockDimZ == 1),
                  "your node has another block than one thread");
    CHECK_MESSAGE(p.sharedMemBytes == 0, "your node asks for dynamic shared memory");
    wbt::setWords(value.get(), 0, 1);
    Exec exec(g.g);
    CU_CHECK(cuGraphLaunch(exec.e, s.get()));
    s.sync();
    unsigned result = 0;
    CU_CHECK(cuMemcpyDtoH(&result, value.get(), sizeof result));
    CHECK_MESSAGE(result == 3, "the three kernels did not each add 1 to what the one before left");
#endif
  }

  TEST_CASE("R2 R3: a stream that joined a second capturing stream has two dependencies: your node depends on both") {
    Lab lab;
    requireEdgeData();
#if CUDA_VERSION >= 12030
    wbt::DeviceBuffer values(2 * sizeof(unsigned)), times(12 * sizeof(unsigned long long));
    Stream s, other;
    CUevent fork = nullptr, join = nullptr;
    CU_CHECK(cuEventCreate(&fork, CU_EVENT_DISABLE_TIMING));
    CU_CHECK(cuEventCreate(&join, CU_EVENT_DISABLE_TIMING));
    LinkArgs a(values.get(), times.get(), 0), x(values.get() + 4, times.get(), 1), b(values.get(), times.get(), 2);
    Graph g;
    CU_CHECK(cuStreamBeginCapture(s.get(), CU_STREAM_CAPTURE_MODE_GLOBAL));
    CU_CHECK(cuEventRecord(fork, s.get()));  // before any work: the other stream joins with no dependency
    CU_CHECK(cuStreamWaitEvent(other.get(), fork, 0));
    launchLink(lab, a, s.get());
    launchLink(lab, x, other.get());
    CU_CHECK(cuEventRecord(join, other.get()));
    CU_CHECK(cuStreamWaitEvent(s.get(), join, 0));
    std::vector<CUgraphNode> want = captureDependencies(s.get());
    CUgraphNode mine = nullptr;
    try {
      mine = ex20::appendToCapture(s.get(), lab.chainLink, b.args);
    } catch (...) {
      endOwnCapture(s.get(), g);
      cuEventDestroy(join);
      cuEventDestroy(fork);
      throw;
    }
    const std::vector<CUgraphNode> after = captureDependencies(s.get());
    REQUIRE(cuStreamEndCapture(s.get(), &g.g) == CUDA_SUCCESS);
    CU_CHECK(cuEventDestroy(join));
    CU_CHECK(cuEventDestroy(fork));
    REQUIRE(want.size() == 2);
    std::vector<CUgraphNode> got;
    for (const Dependency& d : dependenciesOf(mine)) got.push_back(d.node);
    std::sort(want.begin(), want.end());
    std::sort(got.begin(), got.end());
    CHECK_MESSAGE(got == want, "your node does not depend on every one of the stream's dependencies");
    CHECK_MESSAGE(after == std::vector<CUgraphNode>{mine}, "the stream's dependencies are not your node alone");
#endif
  }

  TEST_CASE("R4: on a stream that is not capturing it throws wb::DriverError with CUDA_ERROR_ILLEGAL_STATE") {
    Lab lab;
    requireEdgeData();
#if CUDA_VERSION >= 12030
    wbt::DeviceBuffer value(sizeof(unsigned)), times(3 * sizeof(unsigned long long));
    Stream s;
    LinkArgs a(value.get(), times.get(), 0);
    CUresult code = CUDA_SUCCESS;
    try {
      ex20::appendToCapture(s.get(), lab.chainLink, a.args);
    } catch (const wb::DriverError& e) {
      code = e.code();
    }
    const std::string name = wb::errorName(code);
    CAPTURE(name);
    CHECK_MESSAGE(code == CUDA_ERROR_ILLEGAL_STATE,
                  "a stream that is not capturing did not give wb::DriverError with CUDA_ERROR_ILLEGAL_STATE");
#endif
  }

  TEST_CASE("R5: when asking for the capture's dependencies, or setting the stream's, fails, it throws wb::DriverError") {
    Lab lab;
    requireEdgeData();
#if CUDA_VERSION >= 12030
    wbt::DeviceBuffer value(sizeof(unsigned)), times(6 * sizeof(unsigned long long));
    LinkArgs a(value.get(), times.get(), 0), b(value.get(), times.get(), 1);
    for (const char* entry : {"cuStreamGetCaptureInfo_v3", "cuStreamUpdateCaptureDependencies_v2"}) {
      CAPTURE(entry);
      Stream s;
      Graph g;
      CU_CHECK(cuStreamBeginCapture(s.get(), CU_STREAM_CAPTURE_MODE_GLOBAL));
      launchLink(lab, a, s.get());
      bool threw = false, fired = false;
      {
        wbx::FailCall fail(entry, CUDA_ERROR_INVALID_VALUE);
        try {
          ex20::appendToCapture(s.get(), lab.chainLink, b.args);
        } catch (const wb::DriverError&) {
          threw = true;
        } catch (...) {
          endOwnCapture(s.get(), g);
          throw;
        }
        fired = fail.fired();
      }
      endOwnCapture(s.get(), g);
      CHECK_MESSAGE(fired, "appendToCapture did not call the entry point the task names");
      if (fired) CHECK_MESSAGE(threw, "the call failed and appendToCapture did not throw wb::DriverError");
    }
#endif
  }
}
