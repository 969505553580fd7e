// Lesson 31's claims: cuGraphExecUpdate applies a fresh capture of the same topology to the same
// executable graph, and refuses one with a node more (CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE, result
// TOPOLOGY_CHANGED), after which a new instantiation runs the new step; cuGraphExecKernelNodeSetParams
// changes the executable graph alone and leaves a launch already queued as it was; an executable
// graph destroyed while its launch waits in a stream still runs that launch; a graph whose kernels read
// the position from device memory, with a conditional IF node for the block's open, computes every
// step from one instantiation.
#include "damaged_images.hpp"
#include "gate.hpp"
#include "graph_handles.hpp"
#include "support.hpp"

#include <string>
#include <utility>
#include <vector>

namespace {

using wbt::Exec;
using wbt::Graph;
using wbt::Stream;

constexpr unsigned kN = 1024, kRows = 32, kRowsPerBlock = 16, kOps = 3;

// The primary context of device 0, current; decode_step's kernels and the gate, loaded before any
// capture or gate; a, b, the cache (rows set to -1) and the position word.
struct Lab {
  wbt::RetainedPrimary primary{wbt::deviceKeepingPrimary(0)};
  wbt::Pushed current{primary.get()};
  CUlibrary lib = nullptr, streams = nullptr;
  CUfunction op = nullptr, store = nullptr, open = nullptr, gate = nullptr;
  wbt::DeviceBuffer a{kN * sizeof(float)}, b{kN * sizeof(float)}, cache{size_t{kRows} * kN * sizeof(float)},
      pos{sizeof(unsigned)};
  Lab() {
    CU_CHECK(cuLibraryLoadFromFile(&lib, wb::verifiedImagePath("decode_step.fatbin").c_str(), nullptr, nullptr, 0,
                                   nullptr, nullptr, 0));
    CU_CHECK(cuLibraryLoadFromFile(&streams, wb::verifiedImagePath("streams.fatbin").c_str(), nullptr, nullptr, 0,
                                   nullptr, nullptr, 0));
    gate = wb::StreamKernels::load(streams).gate;
    op = wbt::functionOf(lib, "decode_op");
    store = wbt::functionOf(lib, "decode_store");
    open = wbt::functionOf(lib, "decode_open");
    CU_CHECK(cuMemsetD32(a.get(), 0, kN));
    CU_CHECK(cuMemsetD32(b.get(), 0, kN));
    CU_CHECK(cuMemsetD32(cache.get(), 0xBF800000u, size_t{kRows} * kN));
    CU_CHECK(cuMemsetD32(pos.get(), 0, 1));
    CU_CHECK(cuCtxSynchronize());  // landed before the cases' non-blocking streams read them
  }
  ~Lab() {
    cuLibraryUnload(streams);
    cuLibraryUnload(lib);
  }
  CUdeviceptr row(unsigned p) const { return cache.get() + CUdeviceptr(p) * kN * sizeof(float); }
  float rowValue(unsigned p) const {
    float v = 0;
    CU_CHECK(cuMemcpyDtoH(&v, row(p), sizeof v));
    return v;
  }
  // The step at p, launched kernel by kernel (the program's launchStep).
  void launchStep(unsigned p, CUstream s) const {
    unsigned n = kN, count = kRowsPerBlock * kN;
    if (p % kRowsPerBlock == 0) {
      CUdeviceptr block = row(p);
      void* args[] = {&block, &count};
      CU_CHECK(cuLaunchKernel(open, 1, 1, 1, 256, 1, 1, 0, s, args, nullptr));
    }
    CUdeviceptr src = a.get(), dst = b.get();
    for (unsigned j = 0; j < kOps; ++j, std::swap(src, dst)) {
      void* args[] = {&dst, &src, &n, &p};
      CU_CHECK(cuLaunchKernel(op, 1, 1, 1, 256, 1, 1, 0, s, args, nullptr));
    }
    CUdeviceptr r = row(p);
    void* args[] = {&r, &src, &n};
    CU_CHECK(cuLaunchKernel(store, 1, 1, 1, 256, 1, 1, 0, s, args, nullptr));
  }
  void capture(unsigned p, CUstream s, Graph& g) const {
    CU_CHECK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    launchStep(p, s);
    CU_CHECK(cuStreamEndCapture(s, &g.g));
  }
};

// The host's value of every row after steps 0..last-1 from zeroed a and b (-1: no step wrote it).
std::vector<float> model(unsigned first, unsigned last) {
  std::vector<float> rows(kRows, -1.0f);
  float a = 0, b = 0;
  for (unsigned p = first; p < last; ++p) {
    if (p % kRowsPerBlock == 0)
      for (unsigned r = p; r < p + kRowsPerBlock && r < kRows; ++r) rows[r] = 0.0f;
    float *src = &a, *dst = &b;
    for (unsigned j = 0; j < kOps; ++j, std::swap(src, dst)) *dst = *src * 0.5f + float(p);
    rows[p] = *src;
  }
  return rows;
}

}  // namespace

TEST_SUITE("update") {
  TEST_CASE("cuGraphExecUpdate applies a fresh capture of the same shape to the same executable graph, and refuses one with a node more with CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE and TOPOLOGY_CHANGED; a new instantiation then runs the new step") {
    Lab lab;
    Stream s;
    Graph first, second, opening;
    lab.capture(1, s.get(), first);
    Exec exec(first.g);
    lab.capture(2, s.get(), second);
    CUgraphExecUpdateResultInfo info{};
    CHECK(cuGraphExecUpdate(exec.e, second.g, &info) == CUDA_SUCCESS);
    CHECK(info.result == CU_GRAPH_EXEC_UPDATE_SUCCESS);
    CU_CHECK(cuGraphLaunch(exec.e, s.get()));
    s.sync();
    CHECK(lab.rowValue(2) == model(2, 3)[2]);
    CHECK(lab.rowValue(1) == -1.0f);  // the update replaced step 1's row by step 2's
    lab.capture(16, s.get(), opening);  // the open: one kernel more
    info = {};
    CHECK(cuGraphExecUpdate(exec.e, opening.g, &info) == CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE);
    CHECK(info.result == CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED);
    Exec fallback(opening.g);  // the documented fallback
    CU_CHECK(cuGraphLaunch(fallback.e, s.get()));
    s.sync();
    CHECK(lab.rowValue(17) == 0.0f);  // the block at 16 opened
    CHECK(lab.rowValue(16) != -1.0f);
  }
}

TEST_SUITE("set-params") {
  TEST_CASE("cuGraphExecKernelNodeSetParams changes the executable graph alone, and a launch queued before it (held by a gate) still runs with the old arguments") {
    Lab lab;
    Stream s;
    Graph g;
    lab.capture(1, s.get(), g);
    // The store node: the chain's last node, the one no node depends on.
    size_t count = 0;
    CU_CHECK(cuGraphGetNodes(g.g, nullptr, &count));
    std::vector<CUgraphNode> nodes(count);
    CU_CHECK(cuGraphGetNodes(g.g, nodes.data(), &count));
    Exec exec(g.g);
    CUgraphNode storeNode = nullptr;
    for (CUgraphNode node : nodes) {
      size_t after = 0;
#if CUDA_VERSION >= 12030
      CU_CHECK(cuGraphNodeGetDependentNodes_v2(node, nullptr, nullptr, &after));
#else
      CU_CHECK(cuGraphNodeGetDependentNodes(node, nullptr, &after));
#endif
      if (after == 0) storeNode = node;
    }
    CUDA_KERNEL_NODE_PARAMS p{};
    if (storeNode) CU_CHECK(cuGraphKernelNodeGetParams(storeNode, &p));
    REQUIRE(storeNode != nullptr);
    {
      wb::Gate gate(lab.gate, s.get());
      CU_CHECK(cuGraphLaunch(exec.e, s.get()));  // queued behind the gate: step 1's row
      CUdeviceptr moved = lab.row(5), src = *static_cast<CUdeviceptr*>(p.kernelParams[1]);
      unsigned n = kN;
      void* args[] = {&moved, &src, &n};
      p.kernelParams = args;
      p.extra = nullptr;
      CU_CHECK(cuGraphExecKernelNodeSetParams(exec.e, storeNode, &p));
      CHECK(gate.outcome() == wb::Gate::Waiting);  // the set happened while the launch waited
      gate.open();
    }
    s.sync();
    CHECK(lab.rowValue(1) != -1.0f);  // "already enqueued launches are not affected"
    CHECK(lab.rowValue(5) == -1.0f);
    // The ops start again from the state the first launch had; in s, which does not wait for the legacy stream.
    CU_CHECK(cuMemsetD32Async(lab.a.get(), 0, kN, s.get()));
    CU_CHECK(cuMemsetD32Async(lab.b.get(), 0, kN, s.get()));
    CU_CHECK(cuGraphLaunch(exec.e, s.get()));
    s.sync();
    CHECK(lab.rowValue(5) == lab.rowValue(1));  // the next launch stores into row 5
    CUDA_KERNEL_NODE_PARAMS kept{};
    CU_CHECK(cuGraphKernelNodeGetParams(storeNode, &kept));
    CHECK(*static_cast<CUdeviceptr*>(kept.kernelParams[0]) == lab.row(1));  // "node is also not modified"
  }

  TEST_CASE("an executable graph destroyed while its launch waits behind a gate still runs that launch") {
    Lab lab;
    Stream s;
    Graph g;
    lab.capture(3, s.get(), g);
    {
      wb::Gate gate(lab.gate, s.get());
      CUgraphExec exec = nullptr;
      CU_CHECK(cuGraphInstantiate(&exec, g.g, 0));
      CU_CHECK(cuGraphLaunch(exec, s.get()));
      CHECK(cuGraphExecDestroy(exec) == CUDA_SUCCESS);  // "freed asynchronously on completion"
      CHECK(gate.outcome() == wb::Gate::Waiting);
      gate.open();
    }
    s.sync();
    CHECK(lab.rowValue(3) == model(3, 4)[3]);
  }
}

#if CUDA_VERSION >= 12040
TEST_SUITE("conditional") {
  TEST_CASE("a graph whose kernels read the position from device memory, the open in an IF node's body, computes steps 0 to 17 from one instantiation and advances the position by one per launch") {
    Lab lab;
    Stream s;
    for (unsigned p = 0; p < 18; ++p) lab.launchStep(p, s.get());
    s.sync();
    std::vector<float> eager(size_t{kRows} * kN), got(eager.size());
    CU_CHECK(cuMemcpyDtoH(eager.data(), lab.cache.get(), eager.size() * sizeof(float)));
    CU_CHECK(cuMemsetD32Async(lab.a.get(), 0, kN, s.get()));  // in s, where the graph will read them
    CU_CHECK(cuMemsetD32Async(lab.b.get(), 0, kN, s.get()));
    CU_CHECK(cuMemsetD32Async(lab.cache.get(), 0xBF800000u, size_t{kRows} * kN, s.get()));
    CUfunction first = wbt::functionOf(lab.lib, "decode_first_dev"), op = wbt::functionOf(lab.lib, "decode_op_dev"),
               open = wbt::functionOf(lab.lib, "decode_open_dev"), store = wbt::functionOf(lab.lib, "decode_store_dev");
    Graph g;
    CU_CHECK(cuGraphCreate(&g.g, 0));
    CUgraphConditionalHandle opens = 0;
    CU_CHECK(cuGraphConditionalHandleCreate(&opens, g.g, lab.primary.get(), 0, CU_GRAPH_COND_ASSIGN_DEFAULT));
    CUdeviceptr src = lab.a.get(), dst = lab.b.get(), pos = lab.pos.get(), cache = lab.cache.get();
    unsigned n = kN, rows = kRowsPerBlock;
    auto add = [&](CUgraph graph, CUgraphNode after, CUfunction f, std::vector<void*> args) {
      CUDA_KERNEL_NODE_PARAMS p{};
      p.func = f;
      p.gridDimX = p.gridDimY = p.gridDimZ = 1;
      p.blockDimX = 256, p.blockDimY = p.blockDimZ = 1;
      p.kernelParams = args.data();
      CUgraphNode node = nullptr;
      CU_CHECK(cuGraphAddKernelNode(&node, graph, after ? &after : nullptr, after ? 1 : 0, &p));
      return node;
    };
    CUgraphNode last = add(g.g, nullptr, first, {&dst, &src, &n, &pos, &rows, &opens});
    CUgraphNodeParams cond{};
    cond.type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
    cond.conditional.handle = opens;
    cond.conditional.type = CU_GRAPH_COND_TYPE_IF;
    cond.conditional.size = 1;
    cond.conditional.ctx = lab.primary.get();
    CUgraphNode ifNode = nullptr;
    CU_CHECK(wb::graphAddNode(&ifNode, g.g, &last, 1, &cond));
    add(cond.conditional.phGraph_out[0], nullptr, open, {&cache, &n, &rows, &pos});
    last = ifNode;
    for (unsigned j = 1; j < kOps; ++j) {
      std::swap(src, dst);
      last = add(g.g, last, op, {&dst, &src, &n, &pos});
    }
    add(g.g, last, store, {&cache, &dst, &n, &pos});
    Exec exec(g.g);
    for (unsigned p = 0; p < 18; ++p) CU_CHECK(cuGraphLaunch(exec.e, s.get()));
    s.sync();
    unsigned advanced = 0;
    CU_CHECK(cuMemcpyDtoH(&advanced, lab.pos.get(), sizeof advanced));
    CHECK(advanced == 18);
    CU_CHECK(cuMemcpyDtoH(got.data(), lab.cache.get(), got.size() * sizeof(float)));
    CHECK(got == eager);
    const std::vector<float> m = model(0, 18);
    CHECK(eager[size_t{17} * kN] == m[17]);
    CHECK(eager[size_t{20} * kN] == 0.0f);  // opened at 16, not yet written
  }
}
#endif

TEST_SUITE("damaged-images") {
  TEST_CASE("pointed at an empty folder or at damaged images, the program stops in seconds, naming the file") {
    wbt::checkProgramRefusesDamagedImages(WORKBOOK_LESSON_PROGRAM);
  }
}
