// The checks of lesson 31's exercises (lessons/31-decode-loop/exercises.cpp). Results are read from
// the cache the steps write, compared with the host's arithmetic (multiplying by 0.5 is exact, so the
// comparison is bit for bit); what a function captured, set or instantiated is read from the graphs
// and from the ledger (tests/exercises/ledger.hpp), whose FailCall makes a chosen call fail. Each
// case's name begins with the requirements it verifies.
#include "check.hpp"
#include "31-decode-loop/exercises.hpp"
#include "graph_handles.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

// Entry points the checks count or make fail, beyond the ledger's own.
WBX_INTERPOSE(cuGraphExecUpdate, (CUgraphExec e, CUgraph g, CUgraphExecUpdateResultInfo* info), (e, g, info))
WBX_INTERPOSE(cuGraphExecKernelNodeSetParams, (CUgraphExec e, CUgraphNode n, const CUDA_KERNEL_NODE_PARAMS* p),
              (e, n, p))
WBX_INTERPOSE(cuGraphKernelNodeSetParams, (CUgraphNode n, const CUDA_KERNEL_NODE_PARAMS* p), (n, p))
#if CUDA_VERSION >= 12040
WBX_INTERPOSE(cuGraphConditionalHandleCreate,
              (CUgraphConditionalHandle * h, CUgraph g, CUcontext c, unsigned v, unsigned f), (h, g, c, v, f))
#endif

namespace {

using wbt::Exec;
using wbt::Graph;
using wbt::Stream;

constexpr unsigned kN = 1024, kRows = 64;

// The primary context of device 0, current; decode_step's kernels, loaded before any capture; a, b
// and a cache of kRows rows, set to -1 (a row no step wrote) and a, b to 0; and the position word.
struct Lab {
  wbt::RetainedPrimary primary{(wbt::initDriver(), wbt::device(0))};
  wbt::Pushed current{primary.get()};
  CUlibrary lib = nullptr;
  wbt::DeviceBuffer a{kN * sizeof(float)}, b{kN * sizeof(float)}, cache{size_t{kRows} * kN * sizeof(float)},
      pos{sizeof(unsigned)};
  ex31::Chain c;
  explicit Lab(unsigned ops = 3, unsigned rowsPerBlock = 4) {
    CU_CHECK(cuLibraryLoadFromFile(&lib, wb::verifiedImagePath("decode_step.fatbin").c_str(), nullptr, nullptr, 0,
                                   nullptr, nullptr, 0));
    c.op = wbt::functionOf(lib, "decode_op");
    c.store = wbt::functionOf(lib, "decode_store");
    c.open = wbt::functionOf(lib, "decode_open");
    c.a = a.get(), c.b = b.get(), c.cache = cache.get();
    c.n = kN, c.ops = ops, c.rowsPerBlock = rowsPerBlock;
    reset();
  }
  ~Lab() { cuLibraryUnload(lib); }
  void reset() {
    CU_CHECK(cuMemsetD32(a.get(), 0, kN));
    CU_CHECK(cuMemsetD32(b.get(), 0, kN));
    CU_CHECK(cuMemsetD32(cache.get(), 0xBF800000u, size_t{kRows} * kN));  // -1.0f
    CU_CHECK(cuMemsetD32(pos.get(), 0, 1));
    CU_CHECK(cuCtxSynchronize());  // landed before the check's non-blocking streams read them
  }
  // buildDeviceStep's kernels (the _dev ones, which read the position from pos) on these buffers.
  ex31::DeviceChain deviceChain() const {
    return {wbt::functionOf(lib, "decode_first_dev"), wbt::functionOf(lib, "decode_op_dev"),
            wbt::functionOf(lib, "decode_open_dev"), wbt::functionOf(lib, "decode_store_dev"),
            a.get(), b.get(), cache.get(), pos.get(), kN, c.ops, c.rowsPerBlock};
  }
  std::vector<float> rows() const {
    std::vector<float> v(size_t{kRows} * kN);
    CU_CHECK(cuMemcpyDtoH(v.data(), cache.get(), v.size() * sizeof(float)));
    return v;
  }
};

// The host's model of the same steps: a and b hold one value each (every element the same).
struct Model {
  unsigned ops, rowsPerBlock;
  float a = 0, b = 0;
  std::vector<float> rows = std::vector<float>(kRows, -1.0f);
  void step(unsigned pos) {
    if (pos % rowsPerBlock == 0)
      for (unsigned r = pos; r < pos + rowsPerBlock && r < kRows; ++r) rows[r] = 0.0f;
    float *src = &a, *dst = &b;
    for (unsigned j = 0; j < ops; ++j) {
      *dst = *src * 0.5f + float(pos);
      std::swap(src, dst);
    }
    rows[pos] = *src;
  }
};

// The first row where the cache differs from the model, or -1.
int firstWrongRow(const std::vector<float>& cache, const Model& m) {
  for (unsigned r = 0; r < kRows; ++r)
    for (unsigned i = 0; i < kN; ++i)
      if (cache[size_t{r} * kN + i] != m.rows[r]) return int(r);
  return -1;
}

std::vector<CUgraphNode> ofType(CUgraph graph, CUgraphNodeType type) {
  size_t n = 0;
  CU_CHECK(cuGraphGetNodes(graph, nullptr, &n));
  std::vector<CUgraphNode> nodes(n), out;
  if (n) CU_CHECK(cuGraphGetNodes(graph, nodes.data(), &n));
  for (CUgraphNode node : nodes) {
    CUgraphNodeType t{};
    CU_CHECK(cuGraphNodeGetType(node, &t));
    if (t == type) out.push_back(node);
  }
  return out;
}

CUstreamCaptureStatus statusOf(CUstream s) {
  CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
  CU_CHECK(cuStreamIsCapturing(s, &st));
  return st;
}

// Captures launchStep(pos) (the solution's, in every binary but launch-step's own) into g.
void capture(const Lab& lab, unsigned pos, CUstream s, Graph& g) {
  CU_CHECK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
  try {
    ex31::launchStep(lab.c, pos, s);
  } catch (...) {
    if (statusOf(s) != CU_STREAM_CAPTURE_STATUS_NONE) cuStreamEndCapture(s, &g.g);
    throw;
  }
  CU_CHECK(cuStreamEndCapture(s, &g.g));
}

// The value argument's address of a store node (its row), as the template holds it.
CUdeviceptr storeRow(CUgraphNode node) {
  CUDA_KERNEL_NODE_PARAMS p{};
  CU_CHECK(cuGraphKernelNodeGetParams(node, &p));
  return *static_cast<CUdeviceptr*>(p.kernelParams[0]);
}

// What the process holds in graphs and executable graphs, by the ledger.
std::pair<long, long> graphsHeld() {
  const wbx::Holdings h = wbx::holdings();
  return {h[wbx::Held::Graphs], h[wbx::Held::GraphExecs]};
}

}  // namespace

EXERCISE("launch-step", "One decode step, kernel by kernel",
         "if (pos % c.rowsPerBlock == 0) launch c.open with {cache + pos*n floats, rowsPerBlock*n}; then src = a, "
         "dst = b; c.ops times: launch c.op with {&dst, &src, &n, &pos} and swap src, dst; last, launch c.store with "
         "{cache + pos*n floats, src, n}. Every launch cuLaunchKernel(f, 1,1,1, kBlock,1,1, 0, s, args, nullptr) "
         "inside CU_CHECK.") {
  TEST_CASE("R1: steps 0 to 5 launched eagerly leave the host's values in every row, and an opened block at 0") {
    Lab lab;
    Stream s;
    Model m{lab.c.ops, lab.c.rowsPerBlock};
    for (unsigned pos = 0; pos <= 5; ++pos) {
      ex31::launchStep(lab.c, pos, s.get());
      m.step(pos);
    }
    s.sync();
    const int wrong = firstWrongRow(lab.rows(), m);
    CHECK_MESSAGE(wrong < 0, "R1: cache row " << wrong << " differs from the step's result (or from 0 in an "
                                 "opened block, or -1 where no step wrote)");
  }

  TEST_CASE("R2 R3: in a GLOBAL capture the capture stays ACTIVE, with 4 kernels for step 7 and 5 for step 8") {
    Lab lab;
    Stream s;
    for (unsigned pos : {7u, 8u}) {
      Graph g;
      CU_CHECK(cuStreamBeginCapture(s.get(), CU_STREAM_CAPTURE_MODE_GLOBAL));
      try {
        ex31::launchStep(lab.c, pos, s.get());
      } catch (...) {
        if (statusOf(s.get()) != CU_STREAM_CAPTURE_STATUS_NONE) cuStreamEndCapture(s.get(), &g.g);
        throw;
      }
      const CUstreamCaptureStatus st = statusOf(s.get());
      CHECK_MESSAGE(st == CU_STREAM_CAPTURE_STATUS_ACTIVE, "R3: the capture is no longer ACTIVE after step " << pos);
      const CUresult end = cuStreamEndCapture(s.get(), &g.g);
      REQUIRE_MESSAGE(end == CUDA_SUCCESS, "R3: the capture ended with " << wb::errorName(end));
      const size_t kernels = ofType(g.g, CU_GRAPH_NODE_TYPE_KERNEL).size();
      CHECK_MESSAGE(kernels == ex31::kernelsAt(lab.c, pos),
                    "R2: step " << pos << " launched " << kernels << " kernels, not " << ex31::kernelsAt(lab.c, pos));
    }
  }

  TEST_CASE("R4: a failed launch throws wb::DriverError") {
    Lab lab;
    Stream s;
    wbx::FailCall fail("cuLaunchKernel", CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, 2);
    CHECK_THROWS_AS(ex31::launchStep(lab.c, 1, s.get()), wb::DriverError);
    CHECK_MESSAGE(fail.fired(), "R2: launchStep did not launch a second kernel");
    s.sync();
  }
}

EXERCISE("set-step", "Node by node, with the nodes kept",
         "Throw std::invalid_argument unless nodes.size() == kernelsAt(c, pos). Then walk the chain as launchStep "
         "does, and for node k: CUDA_KERNEL_NODE_PARAMS p{} with func, grid 1, block kBlock and kernelParams the same "
         "args; CU_CHECK(cuGraphExecKernelNodeSetParams(exec, nodes[k], &p)).") {
  TEST_CASE("R1 R2: steps 2 and 3 set on the graph of step 1 compute their rows; the template keeps step 1's") {
    Lab lab;
    Stream s;
    Model m{lab.c.ops, lab.c.rowsPerBlock};
    Graph g;
    capture(lab, 1, s.get(), g);
    const std::vector<CUgraphNode> nodes = ex31::chainNodes(g.g);
    Exec exec(g.g);
    const CUgraphExec handle = exec.e;
    const long instantiated = wbx::calls("cuGraphInstantiate"), captured = wbx::calls("cuStreamBeginCapture");
    const long updated = wbx::calls("cuGraphExecUpdate"), template_ = wbx::calls("cuGraphKernelNodeSetParams");
    for (unsigned pos = 1; pos <= 3; ++pos) {
      if (pos > 1) ex31::setStep(exec.e, nodes, lab.c, pos);
      CU_CHECK(cuGraphLaunch(exec.e, s.get()));
      m.step(pos);
    }
    s.sync();
    const int wrong = firstWrongRow(lab.rows(), m);
    CHECK_MESSAGE(wrong < 0, "R1: cache row " << wrong << " differs from what the set steps should have written");
    CHECK_MESSAGE(storeRow(nodes.back()) == lab.c.cache + CUdeviceptr(1) * kN * sizeof(float),
                  "R2: the template's store node no longer writes step 1's row");
    CHECK_MESSAGE(wbx::calls("cuGraphKernelNodeSetParams") == template_, "R2: setStep changed the template's nodes");
    CHECK_MESSAGE(wbx::calls("cuGraphInstantiate") == instantiated, "R2: setStep instantiated a graph");
    CHECK_MESSAGE(wbx::calls("cuStreamBeginCapture") == captured, "R2: setStep captured");
    CHECK_MESSAGE(wbx::calls("cuGraphExecUpdate") == updated, "R2: setStep called cuGraphExecUpdate");
    CHECK(exec.e == handle);
  }

  TEST_CASE("R1: a step with its open, set from step 4 to step 8, opens the block at 8 and writes row 8") {
    Lab lab;
    Stream s;
    Graph g;
    capture(lab, 4, s.get(), g);
    const std::vector<CUgraphNode> nodes = ex31::chainNodes(g.g);
    Exec exec(g.g);
    ex31::setStep(exec.e, nodes, lab.c, 8);
    CU_CHECK(cuGraphLaunch(exec.e, s.get()));
    s.sync();
    Model m{lab.c.ops, lab.c.rowsPerBlock};
    m.step(8);
    const int wrong = firstWrongRow(lab.rows(), m);
    CHECK_MESSAGE(wrong < 0, "R1: cache row " << wrong << " differs: the open or the store did not move to step 8");
  }

  TEST_CASE("R3: step 4 (one kernel more) on the graph of step 1 is refused with std::invalid_argument, nothing set") {
    Lab lab;
    Stream s;
    Graph g;
    capture(lab, 1, s.get(), g);
    const std::vector<CUgraphNode> nodes = ex31::chainNodes(g.g);
    Exec exec(g.g);
    const long set = wbx::calls("cuGraphExecKernelNodeSetParams");
    CHECK_THROWS_AS(ex31::setStep(exec.e, nodes, lab.c, 4), std::invalid_argument);
    CHECK_MESSAGE(wbx::calls("cuGraphExecKernelNodeSetParams") == set, "R3: setStep changed nodes before refusing");
  }

  TEST_CASE("R4: a failed cuGraphExecKernelNodeSetParams throws wb::DriverError") {
    Lab lab;
    Stream s;
    Graph g;
    capture(lab, 1, s.get(), g);
    const std::vector<CUgraphNode> nodes = ex31::chainNodes(g.g);
    Exec exec(g.g);
    wbx::FailCall fail("cuGraphExecKernelNodeSetParams", CUDA_ERROR_INVALID_VALUE, 2);
    CHECK_THROWS_AS(ex31::setStep(exec.e, nodes, lab.c, 2), wb::DriverError);
    CHECK_MESSAGE(fail.fired(), "R1: setStep did not set a second node with cuGraphExecKernelNodeSetParams");
  }
}

EXERCISE("prepare-step", "Set, update, or recapture, and the fallback",
         "No exec: capture launchStep between cuStreamBeginCapture/cuStreamEndCapture, cuGraphInstantiate, keep "
         "graph and chainNodes. Same shape and setNodes: setStep. Else capture fresh; cuGraphExecUpdate(g.exec, "
         "fresh, &info): CUDA_SUCCESS -> destroy fresh; CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE -> *refused = "
         "info.result, instantiate fresh, then destroy the old exec and graph; anything else -> destroy fresh and "
         "throw.") {
  TEST_CASE("R1 R2 R3 R4: steps 1 to 5 take the right way, hold one graph and one exec, and compute every row") {
    for (bool setNodes : {true, false}) {
      CAPTURE(setNodes);
      Lab lab;
      Stream s;
      Model m{lab.c.ops, lab.c.rowsPerBlock};
      const std::pair<long, long> before = graphsHeld();
      ex31::StepGraph g;
      std::vector<ex31::Took> took;
      CUgraphExecUpdateResult why = CU_GRAPH_EXEC_UPDATE_SUCCESS;
      std::vector<CUgraphExec> execs;
      std::vector<long> captures;
      try {
        for (unsigned pos = 1; pos <= 5; ++pos) {
          const long c0 = wbx::calls("cuStreamBeginCapture");
          took.push_back(ex31::prepareStep(g, lab.c, pos, s.get(), setNodes, &why));
          if (pos == 1)
            CHECK_MESSAGE((g.graph != nullptr && g.nodes == ex31::chainNodes(g.graph)),
                          "R1: after the first step, g.nodes are not the chain of the graph g holds");
          captures.push_back(wbx::calls("cuStreamBeginCapture") - c0);
          execs.push_back(g.exec);
          const std::pair<long, long> held = graphsHeld();
          CHECK_MESSAGE(held.first - before.first == 1, "R3 R4: after step " << pos << ", "
                                                            << held.first - before.first << " graphs held, not 1");
          CHECK_MESSAGE(held.second - before.second == 1, "R4: after step " << pos << ", "
                                                              << held.second - before.second << " execs held, not 1");
          CU_CHECK(cuGraphLaunch(g.exec, s.get()));
          m.step(pos);
        }
        s.sync();
      } catch (...) {
        ex31::releaseStepGraph(g);
        throw;
      }
      const int wrong = firstWrongRow(lab.rows(), m);
      CHECK_MESSAGE(wrong < 0, "R1 R2 R3 R4: cache row " << wrong << " differs from the steps' results");
      REQUIRE(took.size() == 5);
      CHECK_MESSAGE(took[0] == ex31::Took::Instantiated, "R1: the first step did not say Took::Instantiated");
      CHECK_MESSAGE((g.nodes.size() == ex31::kernelsAt(lab.c, 5) && g.graph != nullptr),
                    "R1 R4: g does not hold the graph and its chain's nodes");
      const ex31::Took same = setNodes ? ex31::Took::Set : ex31::Took::Updated;
      CHECK_MESSAGE((took[1] == same && took[2] == same),
                    (setNodes ? "R2: steps 2 and 3 were not set node by node (Took::Set)"
                              : "R3: without setNodes, steps 2 and 3 were not updated (Took::Updated)"));
      if (setNodes) CHECK_MESSAGE((captures[1] == 0 && captures[2] == 0), "R2: a step that could be set was captured");
      CHECK_MESSAGE((execs[1] == execs[0] && execs[2] == execs[0]), "R2 R3: the exec changed on a step of the same shape");
      CHECK_MESSAGE((took[3] == ex31::Took::Reinstantiated && took[4] == ex31::Took::Reinstantiated),
                    "R4: steps 4 and 5 (another shape each time) were not re-instantiated after the refusal");
      CHECK_MESSAGE(why == CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED,
                    "R4: *refused is " << int(why) << ", not TOPOLOGY_CHANGED (the chain gained a node)");
      ex31::releaseStepGraph(g);
      CHECK_MESSAGE(graphsHeld() == before, "R4: graphs or execs left after releaseStepGraph");
    }
  }

  TEST_CASE("R1 R2 R3 R4: 40 steps prepared and launched without waiting give the cache launchStep gives") {
    Lab lab(5, 8);
    Stream s;
    for (unsigned pos = 0; pos < 40; ++pos) ex31::launchStep(lab.c, pos, s.get());
    s.sync();
    const std::vector<float> eager = lab.rows();
    lab.reset();
    ex31::StepGraph g;
    try {
      for (unsigned pos = 0; pos < 40; ++pos) {
        ex31::prepareStep(g, lab.c, pos, s.get(), pos % 2 == 0);  // both ways, in turn
        CU_CHECK(cuGraphLaunch(g.exec, s.get()));
      }
      s.sync();
    } catch (...) {
      ex31::releaseStepGraph(g);
      throw;
    }
    ex31::releaseStepGraph(g);
    CHECK_MESSAGE(lab.rows() == eager, "R1 R2 R3 R4: the prepared graphs wrote another cache than the launches");
  }

  TEST_CASE("R5: another update error throws wb::DriverError; a failed fallback leaves g valid") {
    Lab lab;
    Stream s;
    const std::pair<long, long> before = graphsHeld();
    ex31::StepGraph g;
    try {
      ex31::prepareStep(g, lab.c, 1, s.get(), false);
      {
        wbx::FailCall fail("cuGraphExecUpdate", CUDA_ERROR_INVALID_VALUE);
        CHECK_THROWS_AS(ex31::prepareStep(g, lab.c, 2, s.get(), false), wb::DriverError);
        CHECK_MESSAGE(fail.fired(), "R3: prepareStep did not call cuGraphExecUpdate");
      }
      CHECK_MESSAGE(statusOf(s.get()) == CU_STREAM_CAPTURE_STATUS_NONE, "R5: the stream is still capturing");
      CHECK_MESSAGE(graphsHeld().first - before.first == 1, "R5: the fresh graph was not destroyed after the error");
      {
        wbx::FailCall fail("cuGraphInstantiate", CUDA_ERROR_OUT_OF_MEMORY);
        CHECK_THROWS_AS(ex31::prepareStep(g, lab.c, 4, s.get(), false), wb::DriverError);
        CHECK_MESSAGE(fail.fired(), "R4: the refused update was not followed by cuGraphInstantiate");
      }
      REQUIRE_MESSAGE(g.exec != nullptr, "R5: g lost its executable graph");
      CU_CHECK(cuGraphLaunch(g.exec, s.get()));  // g's exec still works
      s.sync();
    } catch (...) {
      ex31::releaseStepGraph(g);
      throw;
    }
    ex31::releaseStepGraph(g);
    CHECK_MESSAGE(graphsHeld() == before, "R5: graphs or execs leaked");
  }
}

EXERCISE("device-step", "A graph that nothing updates",
         "cuGraphCreate; cuGraphConditionalHandleCreate(&h, graph, ctx, 0, CU_GRAPH_COND_ASSIGN_DEFAULT); add the "
         "first kernel (no dependency), then a CU_GRAPH_NODE_TYPE_CONDITIONAL node (type IF, size 1, ctx) after it "
         "with wb::graphAddNode, the open kernel into conditional.phGraph_out[0], then the ops and the store each "
         "after the node before. In a catch block, cuGraphDestroy(graph) and rethrow.") {
  TEST_CASE("R2 R3: the graph's own nodes are the ops and the store and one IF node, in one chain") {
#if CUDA_VERSION < 12040
    throw wbx::Skipped("built with CUDA " + std::to_string(CUDA_VERSION) + ": conditional nodes need 12.4");
#else
    Lab lab;
    const ex31::DeviceChain d = lab.deviceChain();
    Graph g;
    g.g = ex31::buildDeviceStep(d, lab.primary.get());
    const size_t kernels = ofType(g.g, CU_GRAPH_NODE_TYPE_KERNEL).size();
    const std::vector<CUgraphNode> conds = ofType(g.g, CU_GRAPH_NODE_TYPE_CONDITIONAL);
    CHECK_MESSAGE(kernels == lab.c.ops + 1, "R2: the graph has " << kernels << " kernel nodes of its own, not "
                                                                 << lab.c.ops + 1);
    REQUIRE_MESSAGE(conds.size() == 1, "R2: the graph has " << conds.size() << " conditional nodes, not 1");
    CUgraphNodeParams p{};
#if CUDA_VERSION >= 13020
    CU_CHECK(cuGraphNodeGetParams(conds[0], &p));
    CHECK_MESSAGE(p.conditional.type == CU_GRAPH_COND_TYPE_IF, "R2: the conditional node is not an IF node");
#endif
    (void)p;
    size_t n = 0;
    CU_CHECK(cuGraphGetNodes(g.g, nullptr, &n));
    std::vector<CUgraphNode> order;
    try {
      order = ex31::chainNodes(g.g);
    } catch (const std::invalid_argument& e) {
      FAIL_CHECK("R3: the nodes are not one chain: " << e.what());
    }
    CHECK_MESSAGE(order.size() == n, "R3: the chain from the root reaches " << order.size() << " of " << n << " nodes");
#endif
  }

  TEST_CASE("R1: launched 9 times in a row with nothing changed, the cache of steps 0 to 8 and the position 9") {
#if CUDA_VERSION < 12040
    throw wbx::Skipped("built with CUDA " + std::to_string(CUDA_VERSION) + ": conditional nodes need 12.4");
#else
    Lab lab;
    Stream s;
    for (unsigned pos = 0; pos <= 8; ++pos) ex31::launchStep(lab.c, pos, s.get());
    s.sync();
    const std::vector<float> eager = lab.rows();
    lab.reset();
    const ex31::DeviceChain d = lab.deviceChain();
    Graph g;
    g.g = ex31::buildDeviceStep(d, lab.primary.get());
    Exec exec(g.g);
    for (unsigned pos = 0; pos <= 8; ++pos) CU_CHECK(cuGraphLaunch(exec.e, s.get()));
    s.sync();
    unsigned advanced = 0;
    CU_CHECK(cuMemcpyDtoH(&advanced, lab.pos.get(), sizeof advanced));
    CHECK_MESSAGE(advanced == 9, "R1: the position in device memory is " << advanced << " after 9 launches, not 9");
    const std::vector<float> got = lab.rows();
    int wrong = -1;
    for (unsigned r = 0; r < kRows && wrong < 0; ++r)
      if (!std::equal(got.begin() + r * kN, got.begin() + (r + 1) * kN, eager.begin() + r * kN)) wrong = int(r);
    CHECK_MESSAGE(wrong < 0, "R1: cache row " << wrong << " differs from launchStep's");
#endif
  }

  TEST_CASE("R4: a failed cuGraphConditionalHandleCreate throws wb::DriverError and leaves no graph") {
#if CUDA_VERSION < 12040
    throw wbx::Skipped("built with CUDA " + std::to_string(CUDA_VERSION) + ": conditional nodes need 12.4");
#else
    Lab lab;
    const ex31::DeviceChain d = lab.deviceChain();
    const std::pair<long, long> before = graphsHeld();
    wbx::FailCall fail("cuGraphConditionalHandleCreate", CUDA_ERROR_INVALID_VALUE);
    CUgraph made = nullptr;
    CHECK_THROWS_AS(made = ex31::buildDeviceStep(d, lab.primary.get()), wb::DriverError);
    if (made) cuGraphDestroy(made);
    CHECK_MESSAGE(fail.fired(), "R2: buildDeviceStep did not create a conditional handle");
    CHECK_MESSAGE(graphsHeld() == before, "R4: the graph it began was left behind");
#endif
  }
}
