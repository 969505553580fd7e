// Lesson 31: a decode loop that never recaptures (the GGML / llama.cpp story).
//
// What you learn: how an inference engine runs the same small step once per generated token when
// the step's arguments change every time (the position, the cache row it writes) and its shape
// changes now and then (a new cache block opened). Five ways, on one chain of tiny kernels: launched
// one by one; captured and instantiated every step; captured every step and applied with
// cuGraphExecUpdate (llama.cpp's way), falling back to a new instantiation where the driver refuses
// the update; set node by node with cuGraphExecKernelNodeSetParams, one executable graph per shape;
// and a graph whose kernels read the position from device memory and advance it themselves, the
// shape change a conditional IF node, so nothing is set or updated at all. Last, microseconds per
// step for each way against the kernels' own time on the GPU, and PyTorch's torch.cuda.graph replay
// of a chain of as many kernels of the same size.
//
// APIs: cuLaunchKernel, cuStreamBeginCapture, cuStreamEndCapture, cuGraphInstantiate, cuGraphLaunch,
//       cuGraphExecUpdate, cuGraphExecKernelNodeSetParams, cuGraphGetRootNodes,
//       cuGraphNodeGetDependentNodes, cuGraphCreate, cuGraphAddKernelNode, cuGraphAddNode,
//       cuGraphConditionalHandleCreate, cuEventRecord, cuEventElapsedTime
// Run:  ctest -R lesson31   (or build/lessons/lesson31-decode-loop [--csv f.csv] [--pytorch p.csv])
#include "figure.hpp"
#include "gate.hpp"
#include "workbook.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

constexpr unsigned kN = 1024, kBlock = 256;    // a step's vectors: 1024 floats, one block of 256 threads
constexpr unsigned kRowsPerBlock = 16;         // a cache block: 16 positions; opening one is a shape change
constexpr unsigned kSteps = 128;               // steps a way runs in one round, from position 0
constexpr unsigned kCacheRows = kSteps + kRowsPerBlock;

CUfunction functionOf(CUlibrary library, const char* name) {
  CUkernel kernel = nullptr;
  CU_CHECK(cuLibraryGetKernel(&kernel, library, name));
  CUfunction f = nullptr;
  CU_CHECK(cuKernelGetFunction(&f, kernel));
  return f;
}

//! [chain]
// The step's chain: `ops` launches of decode_op ping-ponging between a and b, then decode_store of
// the result into the cache row at pos; at a block's first position, decode_open first.
struct Chain {
  CUfunction op, store, open;
  CUdeviceptr a, b, cache;
  unsigned ops;
  unsigned kernelsAt(unsigned pos) const { return ops + 1 + (pos % kRowsPerBlock == 0 ? 1 : 0); }
  CUdeviceptr row(unsigned pos) const { return cache + CUdeviceptr(pos) * kN * sizeof(float); }
};
//! [chain]

//! [calls]
// One kernel of a step: its function and its arguments' values, kept so that a node can point at them.
struct Call {
  CUfunction f;
  CUdeviceptr p0, p1;
  unsigned u0, u1;
  std::vector<void*> args;
};

// The step at pos as the calls it makes: what changes from step to step is in the arguments.
std::vector<Call> callsOf(const Chain& c, unsigned pos) {
  std::vector<Call> calls;
  calls.reserve(c.ops + 2);
  if (pos % kRowsPerBlock == 0) calls.push_back({c.open, c.row(pos), 0, kRowsPerBlock * kN, 0, {}});
  CUdeviceptr src = c.a, dst = c.b;
  for (unsigned j = 0; j < c.ops; ++j, std::swap(src, dst)) calls.push_back({c.op, dst, src, kN, pos, {}});
  calls.push_back({c.store, c.row(pos), src, kN, 0, {}});
  for (Call& k : calls) {
    if (k.f == c.open) k.args = {&k.p0, &k.u0};
    else if (k.f == c.op) k.args = {&k.p0, &k.p1, &k.u0, &k.u1};
    else k.args = {&k.p0, &k.p1, &k.u0};
  }
  return calls;
}
//! [calls]

void launchStep(const Chain& c, unsigned pos, CUstream s) {
  for (Call& k : callsOf(c, pos))
    CU_CHECK(cuLaunchKernel(k.f, 1, 1, 1, kBlock, 1, 1, 0, s, k.args.data(), nullptr));
}

CUgraph captureStep(const Chain& c, unsigned pos, CUstream s) {
  CU_CHECK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
  launchStep(c, pos, s);
  CUgraph graph = nullptr;
  CU_CHECK(cuStreamEndCapture(s, &graph));
  return graph;
}

// The host's arithmetic for the same steps (every element of a, b and a row holds one value;
// multiplying by 0.5 is exact, so the comparison is bit for bit).
struct Model {
  unsigned ops;
  float a = 0, b = 0;
  std::vector<float> rows = std::vector<float>(kCacheRows, -1.0f);
  void step(unsigned pos) {
    if (pos % kRowsPerBlock == 0) std::fill(rows.begin() + pos, rows.begin() + pos + kRowsPerBlock, 0.0f);
    float *src = &a, *dst = &b;
    for (unsigned j = 0; j < ops; ++j, std::swap(src, dst)) *dst = *src * 0.5f + float(pos);
    rows[pos] = *src;
  }
};

// Device memory of one decode: a, b, the cache and the position word, reset before every round.
struct Buffers {
  CUdeviceptr a = 0, b = 0, cache = 0, pos = 0;
  Buffers() {
    CU_CHECK(cuMemAlloc(&a, kN * sizeof(float)));
    CU_CHECK(cuMemAlloc(&b, kN * sizeof(float)));
    CU_CHECK(cuMemAlloc(&cache, size_t{kCacheRows} * kN * sizeof(float)));
    CU_CHECK(cuMemAlloc(&pos, sizeof(unsigned)));
  }
  ~Buffers() {
    for (CUdeviceptr p : {pos, cache, b, a}) cuMemFree(p);
  }
  void reset() const {
    CU_CHECK(cuMemsetD32(a, 0, kN));
    CU_CHECK(cuMemsetD32(b, 0, kN));
    CU_CHECK(cuMemsetD32(cache, 0xBF800000u, size_t{kCacheRows} * kN));  // -1.0f: no step wrote here
    CU_CHECK(cuMemsetD32(pos, 0, 1));
    CU_CHECK(cuCtxSynchronize());
  }
  // Whether every float of the cache is what the model computed for the steps before `steps`.
  bool matches(unsigned ops, unsigned steps) const {
    Model m{ops};
    for (unsigned p = 0; p < steps; ++p) m.step(p);
    std::vector<float> got(size_t{kCacheRows} * kN);
    CU_CHECK(cuMemcpyDtoH(got.data(), cache, got.size() * sizeof(float)));
    for (size_t i = 0; i < got.size(); ++i)
      if (got[i] != m.rows[i / kN]) return false;
    return true;
  }
};

//! [set-step]
// Way 4's move: the step's arguments into the executable graph's kernel nodes, each named by the
// node of the graph it was instantiated from. Only exec changes; the template keeps what it held.
void setStep(CUgraphExec exec, const std::vector<CUgraphNode>& nodes, const Chain& c, unsigned pos) {
  std::vector<Call> calls = callsOf(c, pos);
  if (calls.size() != nodes.size()) throw std::invalid_argument("setStep: another shape");
  for (size_t k = 0; k < calls.size(); ++k) {
    CUDA_KERNEL_NODE_PARAMS p{};
    p.func = calls[k].f;
    p.gridDimX = p.gridDimY = p.gridDimZ = 1;
    p.blockDimX = kBlock, p.blockDimY = p.blockDimZ = 1;
    p.kernelParams = calls[k].args.data();
    CU_CHECK(cuGraphExecKernelNodeSetParams(exec, nodes[k], &p));
  }
}
//! [set-step]

// A captured chain's nodes from its root, in the order they run.
std::vector<CUgraphNode> chainNodes(CUgraph graph) {
  size_t count = 1;
  std::vector<CUgraphNode> order(1);
  CU_CHECK(cuGraphGetRootNodes(graph, order.data(), &count));
  for (size_t next = 1; next == 1;) {
    CUgraphNode node = nullptr;
#if CUDA_VERSION >= 12030
    CU_CHECK(cuGraphNodeGetDependentNodes_v2(order.back(), nullptr, nullptr, &next));
    if (next == 1) CU_CHECK(cuGraphNodeGetDependentNodes_v2(order.back(), &node, nullptr, &next));
#else
    CU_CHECK(cuGraphNodeGetDependentNodes(order.back(), nullptr, &next));
    if (next == 1) CU_CHECK(cuGraphNodeGetDependentNodes(order.back(), &node, &next));
#endif
    if (node) order.push_back(node);
  }
  return order;
}

//! [prepare]
// An executable graph for the step at pos, the cheapest way that works, and what it took.
enum class Took { Instantiated, Set, Updated, Reinstantiated };
struct StepGraph {
  CUgraph graph = nullptr;  // the graph exec was instantiated from: its nodes name exec's nodes
  CUgraphExec exec = nullptr;
  std::vector<CUgraphNode> nodes;
  CUgraphExecUpdateResult lastRefusal = CU_GRAPH_EXEC_UPDATE_SUCCESS;
  StepGraph() = default;
  StepGraph(const StepGraph&) = delete;
  StepGraph& operator=(const StepGraph&) = delete;
  ~StepGraph() {
    if (exec) cuGraphExecDestroy(exec);
    if (graph) cuGraphDestroy(graph);
  }
};
//! [prepare]
//! [prepare-2]
Took prepareStep(StepGraph& g, const Chain& c, unsigned pos, CUstream s, bool setNodes) {
  if (g.exec && setNodes && g.nodes.size() == c.kernelsAt(pos)) {
    setStep(g.exec, g.nodes, c, pos);  // no capture, no instantiation
    return Took::Set;
  }
  CUgraph fresh = captureStep(c, pos, s);
  if (g.exec) {
    CUgraphExecUpdateResultInfo info{};
    const CUresult rc = cuGraphExecUpdate(g.exec, fresh, &info);
    if (rc == CUDA_SUCCESS) {  // exec runs fresh's parameters; its nodes are still named by g.graph's
      CU_CHECK(cuGraphDestroy(fresh));
      return Took::Updated;
    }
    if (rc != CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE) {
      cuGraphDestroy(fresh);
      CU_CHECK(rc);
    }
    g.lastRefusal = info.result;  // refused: the documented fallback is a new instantiation
  }
//! [prepare-2]
//! [prepare-3]
  CUgraphExec exec = nullptr;
  const CUresult made = cuGraphInstantiate(&exec, fresh, 0);
  if (made != CUDA_SUCCESS) cuGraphDestroy(fresh);  // g keeps what it held, still valid
  CU_CHECK(made);
  const bool had = g.exec != nullptr;
  if (g.exec) CU_CHECK(cuGraphExecDestroy(g.exec));  // a launch in flight finishes first
  if (g.graph) CU_CHECK(cuGraphDestroy(g.graph));
  g.graph = fresh, g.exec = exec, g.nodes = chainNodes(fresh);
  return had ? Took::Reinstantiated : Took::Instantiated;
}
//! [prepare-3]

const char* refusalName(CUgraphExecUpdateResult r) {
  switch (r) {
    case CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED: return "CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED";
    case CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED: return "CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED";
    case CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED: return "CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED";
    case CU_GRAPH_EXEC_UPDATE_SUCCESS: return "CU_GRAPH_EXEC_UPDATE_SUCCESS";
    default: return "another CU_GRAPH_EXEC_UPDATE_ERROR_*";
  }
}

// The device-driven kernels and the graph built from them (way 5).
struct DeviceKernels {
  CUfunction first = nullptr, op = nullptr, open = nullptr, store = nullptr;
};

#if CUDA_VERSION >= 12040
CUgraphNode addKernel(CUgraph graph, CUgraphNode after, CUfunction f, std::vector<void*> args) {
  CUDA_KERNEL_NODE_PARAMS p{};
  p.func = f;
  p.gridDimX = p.gridDimY = p.gridDimZ = 1;
  p.blockDimX = kBlock, p.blockDimY = p.blockDimZ = 1;
  p.kernelParams = args.data();  // copied by the driver when the node is added
  CUgraphNode node = nullptr;
  CU_CHECK(cuGraphAddKernelNode(&node, graph, after ? &after : nullptr, after ? 1 : 0, &p));
  return node;
}

//! [device-step]
// first (sets the IF's condition) -> IF { open } -> the other ops -> store (advances *pos). Every
// argument is the same at every step: what changes lives in device memory.
CUgraph buildDeviceStep(const DeviceKernels& k, const Buffers& m, unsigned ops, CUcontext ctx) {
  CUgraph graph = nullptr;
  CU_CHECK(cuGraphCreate(&graph, 0));
  CUgraphConditionalHandle opens = 0;
  CU_CHECK(cuGraphConditionalHandleCreate(&opens, graph, ctx, 0, CU_GRAPH_COND_ASSIGN_DEFAULT));
  CUdeviceptr src = m.a, dst = m.b, pos = m.pos, cache = m.cache;
  unsigned n = kN, rows = kRowsPerBlock;
  CUgraphNode last = addKernel(graph, nullptr, k.first, {&dst, &src, &n, &pos, &rows, &opens});
  CUgraphNodeParams cond{};  // zeroed: the reference requires every unused byte to be 0
  cond.type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
  cond.conditional.handle = opens;
  cond.conditional.type = CU_GRAPH_COND_TYPE_IF;
  cond.conditional.size = 1;
  cond.conditional.ctx = ctx;
  CUgraphNode ifNode = nullptr;
  CU_CHECK(wb::graphAddNode(&ifNode, graph, &last, 1, &cond));  // common/compat.hpp: 12 and 13 differ
  addKernel(cond.conditional.phGraph_out[0], nullptr, k.open, {&cache, &n, &rows, &pos});
  last = ifNode;
  for (unsigned j = 1; j < ops; ++j) {
    std::swap(src, dst);
    last = addKernel(graph, last, k.op, {&dst, &src, &n, &pos});
  }
  addKernel(graph, last, k.store, {&cache, &dst, &n, &pos});
  return graph;
}
//! [device-step]
#endif

// One way's rounds: the median microseconds per step over `rounds`, each from position 0 after a
// reset, timed from the first step's call to the end of the last step on the GPU.
template <typename Step>
double timeWay(const Buffers& m, CUstream s, unsigned ops, unsigned steps, int rounds, const char* name,
               Step&& step) {
  std::vector<double> us;
  bool right = true;
  for (int r = 0; r < rounds; ++r) {
    m.reset();
    const wb::Stopwatch clock;
    for (unsigned pos = 0; pos < steps; ++pos) step(pos);
    CU_CHECK(cuStreamSynchronize(s));
    us.push_back(clock.ms() * 1000.0 / steps);
    right = right && m.matches(ops, steps);
  }
  wb::expect(right, std::string(name) + ": every round's cache as the host computed it",
             std::string(name) + " wrote another cache");
  std::sort(us.begin(), us.end());
  return us[us.size() / 2];
}

struct Lab {
  CUcontext ctx;
  CUstream s;
  Chain chain;
  DeviceKernels dev;
  wb::StreamKernels sk;
  Buffers m;
};

double way1(Lab& L, unsigned steps, int rounds) {
  return timeWay(L.m, L.s, L.chain.ops, steps, rounds, "launched one by one",
                 [&](unsigned pos) { launchStep(L.chain, pos, L.s); });
}

//! [way2]
double way2(Lab& L, unsigned steps, int rounds) {
  const char* name = "captured and instantiated every step";
  return timeWay(L.m, L.s, L.chain.ops, steps, rounds, name, [&](unsigned pos) {
    CUgraph graph = captureStep(L.chain, pos, L.s);
    CUgraphExec exec = nullptr;
    CU_CHECK(cuGraphInstantiate(&exec, graph, 0));
    CU_CHECK(cuGraphLaunch(exec, L.s));
    CU_CHECK(cuGraphExecDestroy(exec));  // "freed asynchronously on completion" if still in flight
    CU_CHECK(cuGraphDestroy(graph));
  });
}
//! [way2]

// Ways 3 and 4 through prepareStep; what each step took is counted into `took`. With setNodes, one
// graph per shape (llama.cpp too keeps its graphs by key); without, one graph that every step updates.
double way34(Lab& L, unsigned steps, int rounds, bool setNodes, std::map<Took, unsigned>* took,
             CUgraphExecUpdateResult* refusal) {
  const char* name = setNodes ? "set node by node" : "captured, then cuGraphExecUpdate";
  std::map<unsigned, StepGraph> held;  // destroyed after the last round's launches were waited for
  return timeWay(L.m, L.s, L.chain.ops, steps, rounds, name, [&](unsigned pos) {
    if (pos == 0) held.clear();  // each round starts with no graph: its first instantiations count
    StepGraph& g = held[setNodes ? L.chain.kernelsAt(pos) : 0];
    const Took t = prepareStep(g, L.chain, pos, L.s, setNodes);
    if (took) ++(*took)[t];
    if (refusal && t == Took::Reinstantiated) *refusal = g.lastRefusal;
    CU_CHECK(cuGraphLaunch(g.exec, L.s));
  });
}

#if CUDA_VERSION >= 12040
//! [way5]
// Way 5: built and instantiated once; each step is one cuGraphLaunch and nothing else.
double way5(Lab& L, unsigned steps, int rounds) {
  CUgraph graph = buildDeviceStep(L.dev, L.m, L.chain.ops, L.ctx);
  CUgraphExec exec = nullptr;
  const CUresult rc = cuGraphInstantiate(&exec, graph, 0);
  CU_CHECK(cuGraphDestroy(graph));
  CU_CHECK(rc);
  const double us = timeWay(L.m, L.s, L.chain.ops, steps, rounds, "nothing updated (device memory)",
                            [&](unsigned) { CU_CHECK(cuGraphLaunch(exec, L.s)); });
  CU_CHECK(cuGraphExecDestroy(exec));
  return us;
}
//! [way5]
#endif

//! [limit]
// The kernels' own time on the GPU: a plain step's chain, captured once, launched `replays` times
// behind a closed gate, so that the GPU finds them all queued; events recorded after the gate and
// after the last replay. It includes each kernel's run and the GPU's own gaps between dependent
// kernels and between graphs; it leaves out every host call.
double kernelsOwnTime(Lab& L, unsigned replays) {
  CUgraph graph = captureStep(L.chain, 1, L.s);
  CUgraphExec exec = nullptr;
  CU_CHECK(cuGraphInstantiate(&exec, graph, 0));
  CU_CHECK(cuGraphDestroy(graph));
  CU_CHECK(cuGraphLaunch(exec, L.s));  // uploaded and run once before it is timed
//! [limit]
//! [limit-2]
  CUevent start = nullptr, end = nullptr;
  CU_CHECK(cuEventCreate(&start, CU_EVENT_DEFAULT));
  CU_CHECK(cuEventCreate(&end, CU_EVENT_DEFAULT));
  std::vector<double> per;
  bool released = true;
  for (int round = 0; round < 5; ++round) {
    {
      wb::Gate gate(L.sk.gate, L.s, 10.0);
      CU_CHECK(cuEventRecord(start, L.s));
      for (unsigned r = 0; r < replays; ++r) CU_CHECK(cuGraphLaunch(exec, L.s));
      CU_CHECK(cuEventRecord(end, L.s));
      released = released && gate.outcome() == wb::Gate::Waiting;
      gate.open();
    }
    CU_CHECK(cuEventSynchronize(end));
    float ms = 0;
    CU_CHECK(cuEventElapsedTime(&ms, start, end));
    per.push_back(ms * 1000.0 / replays);
  }
//! [limit-2]
  CU_CHECK(cuEventDestroy(end));
  CU_CHECK(cuEventDestroy(start));
  CU_CHECK(cuGraphExecDestroy(exec));
  if (!released)
    throw std::runtime_error("the gate kernel gave up before the replays were queued: no limit measured");
  std::sort(per.begin(), per.end());
  return per[per.size() / 2];
}

// PyTorch's side, where lessons/31-decode-loop/pytorch_side.py wrote it: rows of
// "kernels per step,way,microseconds per step".
std::vector<std::string> readPyTorch(const std::string& path) {
  std::vector<std::string> rows;
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return rows;
  while (std::getline(in, line))
    if (!line.empty()) rows.push_back(line);
  return rows;
}
double pytorchAt(const std::vector<std::string>& rows, unsigned kernels, const std::string& way) {
  for (const std::string& r : rows) {
    std::stringstream ss(r);
    std::string k, w, v;
    std::getline(ss, k, ','), std::getline(ss, w, ','), std::getline(ss, v, ',');
    if (k == std::to_string(kernels) && w == way) return std::stod(v);
  }
  return -1;
}

const char* tookName(Took t) {
  switch (t) {
    case Took::Instantiated: return "instantiated";
    case Took::Set: return "set node by node";
    case Took::Updated: return "updated";
    default: return "refused, re-instantiated";
  }
}

int main(int argc, char** argv) {
  wb::FigurePaths paths;
  if (!wb::parseFigureArgs(argc, argv, paths, "lesson31-figure.csv", "lesson31-pytorch.csv"))
    return wb::kExitUsage;
  try {
    wb::checkEnvironment({
        {"CUDA_LAUNCH_BLOCKING", wb::Under::Stops,
         "step 6's gate kernel would make its own launch wait for the gate, and every way would be timed serialised"},
    });
    const std::string image = wb::verifiedImagePath("decode_step.fatbin");
    const std::string streamsImage = wb::verifiedImagePath("streams.fatbin");
    CU_CHECK(cuInit(0));
    CUdevice dev = 0;
    CU_CHECK(cuDeviceGet(&dev, 0));
    CUcontext primary = nullptr;
    CU_CHECK(cuDevicePrimaryCtxRetain(&primary, dev));
    CU_CHECK(cuCtxSetCurrent(primary));
    CUlibrary lib = nullptr, streams = nullptr;
    CU_CHECK(cuLibraryLoadFromFile(&lib, image.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0));
    CU_CHECK(cuLibraryLoadFromFile(&streams, streamsImage.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0));
    CUstream s = nullptr;
    CU_CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    int status = wb::kExitOk;
    {
      Lab L{primary, s, {}, {}, wb::StreamKernels::load(streams), {}};
      L.chain = {functionOf(lib, "decode_op"), functionOf(lib, "decode_store"), functionOf(lib, "decode_open"),
                 L.m.a, L.m.b, L.m.cache, 31};
#if CUDA_VERSION >= 12040
      L.dev = {functionOf(lib, "decode_first_dev"), functionOf(lib, "decode_op_dev"), functionOf(lib, "decode_open_dev"),
               functionOf(lib, "decode_store_dev")};
#endif
      const bool sanitizer = wb::underSanitizer();
      const unsigned steps = sanitizer ? 20 : kSteps;  // under compute-sanitizer times mean nothing
      const int rounds = sanitizer ? 1 : 3;

      wb::step(1, "A decode step: tiny kernels whose arguments change");
      //! [what-changes]
      for (unsigned pos : {0u, 1u, 2u, 16u}) {
        const std::vector<Call> calls = callsOf(L.chain, pos);
        std::printf("step %3u: %zu kernels; op arguments (dst, src, n, pos=%u); "
                    "store writes row %u at +%llu bytes%s\n",
                    pos, calls.size(), calls[calls.size() - 2].u1, pos,
                    static_cast<unsigned long long>(calls.back().p0 - L.m.cache),
                    pos % kRowsPerBlock == 0 ? "; opens a cache block first" : "");
      }
      //! [what-changes]
      way1(L, steps, 1);  // a warm-up, which also loads every kernel before the gate of step 6 closes
      std::printf("%u steps launched one by one, 31 ops each: every cache row as the host computed it\n", steps);

      std::map<unsigned, std::map<std::string, double>> us;  // kernels per step -> way -> us per step
      const std::vector<unsigned> lengths = sanitizer ? std::vector<unsigned>{32} : std::vector<unsigned>{8, 16, 32, 64};
      std::map<Took, unsigned> took3, took4;
      CUgraphExecUpdateResult refusal = CU_GRAPH_EXEC_UPDATE_SUCCESS;
      for (unsigned kernels : lengths) {
        L.chain.ops = kernels - 1;
        const bool show = kernels == 32;
        auto& row = us[kernels];
        if (show) wb::step(2, "Ways 1 and 2: launched one by one, or captured and instantiated every step");
        row["launched one by one"] = way1(L, steps, rounds);
        row["captured and instantiated every step"] = way2(L, steps, rounds);
        if (show) {
          std::printf("32 kernels a step (31 ops and the store; 33 where a block opens), %u steps, median of %d:\n",
                      steps, rounds);
          std::printf("  launched one by one                    %8.1f us a step\n", row["launched one by one"]);
          std::printf("  captured and instantiated every step   %8.1f us a step\n",
                      row["captured and instantiated every step"]);
          wb::step(3, "Way 3: capture, then cuGraphExecUpdate (llama.cpp's way)");
        }
        row["captured, then cuGraphExecUpdate"] = way34(L, steps, rounds, false, show ? &took3 : nullptr, &refusal);
        if (show) {
          //! [way3-out]
          std::printf("each step captured afresh and applied to one executable graph "
                      "(%u steps x %d rounds):\n",
                      steps, rounds);
          for (const auto& [t, n] : took3) std::printf("  %-26s %4u steps\n", tookName(t), n);
          std::printf("the refusal's reason (CUgraphExecUpdateResultInfo.result): %s\n",
                      refusalName(refusal));
          std::printf("  %.1f us a step\n", row["captured, then cuGraphExecUpdate"]);
          //! [way3-out]
          wb::expect(took3[Took::Reinstantiated] > 0 && refusal == CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED,
                     "the driver refusing the update where a block opens (a node more), and the fallback taken",
                     "no refusal, or another reason");
          wb::step(4, "Way 4: set node by node, the nodes kept");
        }
        row["set node by node"] = way34(L, steps, rounds, true, show ? &took4 : nullptr, nullptr);
        if (show) {
          for (const auto& [t, n] : took4) std::printf("  %-26s %4u steps\n", tookName(t), n);
          std::printf("  %.1f us a step, one executable graph per shape\n", row["set node by node"]);
          wb::expect(took4[Took::Set] > 0 && took4[Took::Reinstantiated] == 0 && took4[Took::Updated] == 0,
                     "every step after a shape's first set node by node", "a capture or an update after the first");
          wb::step(5, "Way 5: nothing updated: the step reads device memory");
        }
#if CUDA_VERSION >= 12040
        row["nothing updated (device memory)"] = way5(L, steps, rounds);
        if (show) std::printf("one graph, instantiated once, a conditional IF node for the open: %.1f us a step\n",
                              row["nothing updated (device memory)"]);
#else
        if (show) std::printf("left out: built with CUDA %d.%d; conditional nodes need 12.4\n", CUDA_VERSION / 1000,
                              CUDA_VERSION % 1000 / 10);
#endif
        if (!sanitizer) row["the kernels' own time on the GPU (the limit)"] = kernelsOwnTime(L, 8);
      }

      wb::step(6, "Microseconds per step, against the kernels' own time and PyTorch");
      const std::vector<std::string> torch = readPyTorch(paths.pytorch);
      wb::FigureTable table("kernels per step,way,microseconds per step");
      if (sanitizer) {
        std::printf("left out under compute-sanitizer: times mean nothing there\n");
      } else {
        std::printf("%-42s", "us per step, kernels per step:");
        for (unsigned k : lengths) std::printf(" %8u", k);
        std::printf("\n");
        std::map<std::string, std::map<unsigned, double>> byWay;
        for (const auto& [k, ways] : us)
          for (const auto& [w, v] : ways) byWay[w][k] = v;
        for (const std::string& r : torch) {
          std::stringstream ss(r);
          std::string k, w, v;
          std::getline(ss, k, ','), std::getline(ss, w, ','), std::getline(ss, v, ',');
          byWay[w][unsigned(std::stoul(k))] = std::stod(v);
        }
        for (const auto& [w, points] : byWay) {
          std::printf("%-42s", w.c_str());
          for (unsigned k : lengths) {
            const auto it = points.find(k);
            if (it == points.end()) {
              std::printf("        -");
              continue;
            }
            std::printf(" %8.1f", it->second);
            table.row("%u,%s,%.2f", k, w.c_str(), it->second);
          }
          std::printf("\n");
        }
        if (torch.empty()) std::printf("PyTorch not measured in this run\n");
        //! [target]
        const auto& at32 = us[32];
        std::string best;
        for (const auto& [w, v] : at32)
          if (w.find("(the limit)") == std::string::npos && (best.empty() || v < at32.at(best))) best = w;
        const double limit = at32.at("the kernels' own time on the GPU (the limit)");
        const double replay = pytorchAt(torch, 32, "PyTorch torch.cuda.graph replay");
        std::printf("at 32 kernels the best way is \"%s\": %.1f us a step; "
                    "the kernels' own time %.1f us (%.2fx)\n",
                    best.c_str(), at32.at(best), limit, at32.at(best) / limit);
        std::printf("target, within 1.2x of the kernels' own time: %s\n",
                    at32.at(best) <= 1.2 * limit ? "met" : "not met");
        if (replay > 0)
          std::printf("target, at most PyTorch's graph replay of the same chain (%.1f us): %s\n", replay,
                      at32.at(best) <= replay ? "met" : "not met");
        else
          std::printf("target, at most PyTorch's graph replay: not measured in this run\n");
        //! [target]
      }
      status = table.save(paths.csv, 6);
    }
    CU_CHECK(cuStreamDestroy(s));
    CU_CHECK(cuLibraryUnload(streams));
    CU_CHECK(cuLibraryUnload(lib));
    CU_CHECK(cuCtxSetCurrent(nullptr));
    CU_CHECK(cuDevicePrimaryCtxRelease(dev));
    return status;
  } catch (...) {
    return wb::reportFatal(std::current_exception());
  }
}
