// The checks of lesson 29's exercises (lessons/29-graph-memory/exercises.cpp). What a capture made is
// read from the graph itself (its nodes' types and parameters, their dependencies), which the
// reference documents; failure paths use the ledger's FailCall (tests/exercises/ledger.hpp). Each
// case's name begins with the requirements it verifies.
#include "check.hpp"
#include "29-graph-memory/exercises.hpp"
#include "graph_handles.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

// The template node's parameters, through the ledger, so that a check can make the read fail.
WBX_INTERPOSE(cuGraphKernelNodeGetParams, (CUgraphNode node, CUDA_KERNEL_NODE_PARAMS* params), (node, params))

namespace {

using wbt::Graph;
using wbt::Exec;

using wbt::functionOf;
using wbt::Stream;

// The primary context of device 0, current, and vector_ops' fill and scale, loaded before any capture.
struct Lab {
  wbt::RetainedPrimary primary{(wbt::initDriver(), wbt::device(0))};
  wbt::Pushed current{primary.get()};
  CUlibrary vec = nullptr;
  CUfunction fill = nullptr, scale = nullptr;
  Lab() {
    if (!wbt::attribute(wbt::device(0), CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED))
      throw wbx::Skipped("device 0 has no stream-ordered allocator (MEMORY_POOLS_SUPPORTED 0)");
    CU_CHECK(cuLibraryLoadFromFile(&vec, wb::verifiedImagePath("vector_ops.fatbin").c_str(), nullptr, nullptr, 0,
                                   nullptr, nullptr, 0));
    fill = functionOf(vec, "fill");
    scale = functionOf(vec, "scale");
  }
  ~Lab() { cuLibraryUnload(vec); }
};

CUresult launchFill(const Lab& lab, CUdeviceptr out, float value, unsigned n, CUstream s) {
  void* args[] = {&out, &value, &n};
  return cuLaunchKernel(lab.fill, 64, 1, 1, 256, 1, 1, 0, s, args, nullptr);
}
CUresult launchScale(const Lab& lab, CUdeviceptr data, float factor, float offset, unsigned n, CUstream s) {
  void* args[] = {&data, &factor, &offset, &n};
  return cuLaunchKernel(lab.scale, 64, 1, 1, 256, 1, 1, 0, s, args, nullptr);
}



std::vector<CUgraphNode> nodesOf(CUgraph graph) {
  size_t n = 0;
  CU_CHECK(cuGraphGetNodes(graph, nullptr, &n));
  std::vector<CUgraphNode> nodes(n);
  if (n) CU_CHECK(cuGraphGetNodes(graph, nodes.data(), &n));
  return nodes;
}

std::vector<CUgraphNode> ofType(CUgraph graph, CUgraphNodeType type) {
  std::vector<CUgraphNode> out;
  for (CUgraphNode node : nodesOf(graph)) {
    CUgraphNodeType t{};
    CU_CHECK(cuGraphNodeGetType(node, &t));
    if (t == type) out.push_back(node);
  }
  return out;
}

// A node's dependencies (default edges only in these graphs).
std::vector<CUgraphNode> dependenciesOf(CUgraphNode node) {
  size_t n = 0;
#if CUDA_VERSION >= 13000
  CU_CHECK(cuGraphNodeGetDependencies(node, nullptr, nullptr, &n));
  std::vector<CUgraphNode> deps(n);
  if (n) CU_CHECK(cuGraphNodeGetDependencies(node, deps.data(), nullptr, &n));
#else
  CU_CHECK(cuGraphNodeGetDependencies(node, nullptr, &n));
  std::vector<CUgraphNode> deps(n);
  if (n) CU_CHECK(cuGraphNodeGetDependencies(node, deps.data(), &n));
#endif
  return deps;
}

// Whether `to` is reached from `from` along the graph's edges.
bool reaches(CUgraphNode from, CUgraphNode to) {
  std::vector<CUgraphNode> work{to};
  while (!work.empty()) {
    CUgraphNode node = work.back();
    work.pop_back();
    for (CUgraphNode dep : dependenciesOf(node)) {
      if (dep == from) return true;
      work.push_back(dep);
    }
  }
  return false;
}

CUstreamCaptureStatus statusOf(CUstream s) {
  CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
  CU_CHECK(cuStreamIsCapturing(s, &st));
  return st;
}

// Ends a capture the check began, if the code under check left it open; the graph it returns (a
// fresh one from cuStreamBeginCapture) goes to `out`.
void endOwnCapture(CUstream s, Graph& out) {
  if (statusOf(s) != CU_STREAM_CAPTURE_STATUS_NONE) cuStreamEndCapture(s, &out.g);
}

std::vector<float> readFloats(CUdeviceptr p, size_t n) {
  std::vector<float> v(n);
  CU_CHECK(cuMemcpyDtoH(v.data(), p, n * sizeof(float)));
  return v;
}
bool allEqual(const std::vector<float>& v, float value) {
  return std::all_of(v.begin(), v.end(), [&](float x) { return x == value; });
}

// fill(out, value, n) as a kernel node added by hand, with no dependencies.
CUgraphNode addFillNode(const Lab& lab, CUgraph graph, CUdeviceptr out, float value, unsigned n) {
  void* args[] = {&out, &value, &n};
  CUDA_KERNEL_NODE_PARAMS p{};
  p.func = lab.fill;
  p.gridDimX = 64, p.gridDimY = p.gridDimZ = 1;
  p.blockDimX = 256, p.blockDimY = p.blockDimZ = 1;
  p.kernelParams = args;
  CUgraphNode node = nullptr;
  CU_CHECK(cuGraphAddKernelNode(&node, graph, nullptr, 0, &p));
  return node;
}

void requireCaptureToGraph() {
#if CUDA_VERSION < 12030
  throw wbx::Skipped("built with CUDA " + std::to_string(CUDA_VERSION) + ": cuStreamBeginCaptureToGraph needs 12.3");
#endif
}

}  // namespace

EXERCISE("capture-safe-scratch", "Scratch memory that a caller's capture records",
         "scratchFor: CUdeviceptr p = 0; CU_CHECK(cuMemAllocAsync(&p, bytes, stream)); return p; releaseScratch: "
         "CU_CHECK(cuMemFreeAsync(scratch, stream)). Nothing else: no cuMemAlloc, no cuMemFree, no synchronisation.") {
  TEST_CASE("R1 R2 R3: in a GLOBAL capture, an allocation node and a free node of the scratch, the free node after the kernel, and the capture intact") {
    Lab lab;
    Stream s;
    wbt::DeviceBuffer result(4 * sizeof(float));
    const size_t bytes = 8u << 20;
    const unsigned n = static_cast<unsigned>(bytes / sizeof(float));
    Graph g;
    CUdeviceptr p = 0;
    CU_CHECK(cuStreamBeginCapture(s.get(), CU_STREAM_CAPTURE_MODE_GLOBAL));
    try {
      p = ex29::scratchFor(s.get(), bytes);
      CU_CHECK(launchFill(lab, p, 5.0f, n, s.get()));
      CU_CHECK(cuMemcpyDtoDAsync(result.get(), p + bytes - 4 * sizeof(float), 4 * sizeof(float), s.get()));
      ex29::releaseScratch(s.get(), p);
    } catch (...) {
      endOwnCapture(s.get(), g);
      throw;
    }
    const CUstreamCaptureStatus status = statusOf(s.get());
    CHECK_MESSAGE(status == CU_STREAM_CAPTURE_STATUS_ACTIVE, "R3: the capture is no longer ACTIVE after your calls");
    const CUresult end = cuStreamEndCapture(s.get(), &g.g);
    REQUIRE_MESSAGE(end == CUDA_SUCCESS, "R3: the capture ended with " << wb::errorName(end));
    const std::vector<CUgraphNode> allocs = ofType(g.g, CU_GRAPH_NODE_TYPE_MEM_ALLOC);
    const std::vector<CUgraphNode> frees = ofType(g.g, CU_GRAPH_NODE_TYPE_MEM_FREE);
    const std::vector<CUgraphNode> kernels = ofType(g.g, CU_GRAPH_NODE_TYPE_KERNEL);
    REQUIRE_MESSAGE(allocs.size() == 1, "R1: the graph has " << allocs.size() << " allocation nodes, not 1");
    REQUIRE_MESSAGE(frees.size() == 1, "R2: the graph has " << frees.size() << " free nodes, not 1");
    REQUIRE(kernels.size() == 1);
    CUDA_MEM_ALLOC_NODE_PARAMS alloc{};
    CU_CHECK(cuGraphMemAllocNodeGetParams(allocs[0], &alloc));
    CHECK_MESSAGE(alloc.bytesize == bytes, "R1: the allocation node holds " << alloc.bytesize << " bytes");
    CHECK_MESSAGE(alloc.dptr == p, "R1: the allocation node's address is not the one scratchFor returned");
    CUdeviceptr freed = 0;
    CU_CHECK(cuGraphMemFreeNodeGetParams(frees[0], &freed));
    CHECK_MESSAGE(freed == p, "R2: the free node frees another address");
    CHECK_MESSAGE(reaches(kernels[0], frees[0]), "R2: the free node does not come after the kernel that used it");
    Exec exec(g.g);
    for (int launch = 0; launch < 2; ++launch) {
      CU_CHECK(cuMemsetD32Async(result.get(), 0, 4, s.get()));
      CU_CHECK(cuGraphLaunch(exec.e, s.get()));
      s.sync();
      CHECK_MESSAGE(allEqual(readFloats(result.get(), 4), 5.0f), "R1 R2: the graph did not fill and copy its scratch");
    }
  }

  TEST_CASE("R1 R2: outside a capture, memory the stream's later work uses, given back once the stream is done") {
    Lab lab;
    Stream s;
    wbt::DeviceBuffer result(4 * sizeof(float));
    const size_t bytes = 4u << 20;
    const unsigned n = static_cast<unsigned>(bytes / sizeof(float));
    const wbx::Holdings before = wbx::holdings();
    const CUdeviceptr p = ex29::scratchFor(s.get(), bytes);
    REQUIRE_MESSAGE(p != 0, "R1: scratchFor returned address 0");
    CU_CHECK(launchFill(lab, p, 6.0f, n, s.get()));
    CU_CHECK(cuMemcpyDtoDAsync(result.get(), p + bytes - 4 * sizeof(float), 4 * sizeof(float), s.get()));
    ex29::releaseScratch(s.get(), p);
    s.sync();
    CHECK_MESSAGE(allEqual(readFloats(result.get(), 4), 6.0f), "R1: the stream's work did not see its scratch");
    const std::string left = wbx::holdings().differenceFrom(before);
    CHECK_MESSAGE(left.empty(), "R2: left held once the stream was waited for: " << left);
  }

  TEST_CASE("R4: a failed allocation or free throws wb::DriverError") {
    Lab lab;
    Stream s;
    {
      wbx::FailCall fail("cuMemAllocAsync", CUDA_ERROR_OUT_OF_MEMORY);
      CHECK_THROWS_AS(ex29::scratchFor(s.get(), 1u << 20), wb::DriverError);
      CHECK_MESSAGE(fail.fired(), "R1: scratchFor did not call cuMemAllocAsync");
    }
    const CUdeviceptr p = ex29::scratchFor(s.get(), 1u << 20);
    {
      wbx::FailCall fail("cuMemFreeAsync", CUDA_ERROR_INVALID_VALUE);
      CHECK_THROWS_AS(ex29::releaseScratch(s.get(), p), wb::DriverError);
      CHECK_MESSAGE(fail.fired(), "R2: releaseScratch did not call cuMemFreeAsync");
    }
    CU_CHECK(cuMemFreeAsync(p, s.get()));
    s.sync();
  }
}

EXERCISE("append-capture", "Capture into the graph an engine already holds",
         "CU_CHECK(cuStreamBeginCaptureToGraph(stream, graph, after.data(), nullptr, after.size(), "
         "CU_STREAM_CAPTURE_MODE_GLOBAL)); then work(stream) in a try block whose catch calls cuStreamEndCapture and "
         "rethrows; then CU_CHECK(cuStreamEndCapture(stream, &captured)). Destroy nothing: the graph is the "
         "caller's.") {
  TEST_CASE("R1 R2: a captured launch appended after the node given, as a kernel node of the graph itself, and the graph runs it there") {
    requireCaptureToGraph();
    Lab lab;
    Stream s;
    const unsigned n = 4096;
    wbt::DeviceBuffer out(n * sizeof(float));
    Graph g;
    CU_CHECK(cuGraphCreate(&g.g, 0));
    CUgraphNode fill = addFillNode(lab, g.g, out.get(), 2.0f, n);
    ex29::appendCaptured(g.g, {fill}, s.get(),
                         [&](CUstream st) { CU_CHECK(launchScale(lab, out.get(), 3.0f, 1.0f, n, st)); });
    CHECK_MESSAGE(statusOf(s.get()) == CU_STREAM_CAPTURE_STATUS_NONE, "R2: the stream is still capturing");
    const std::vector<CUgraphNode> nodes = nodesOf(g.g);
    REQUIRE_MESSAGE(nodes.size() == 2, "R1: the graph holds " << nodes.size() << " nodes, not the fill and the scale");
    const CUgraphNode scale = nodes[0] == fill ? nodes[1] : nodes[0];
    CUgraphNodeType type{};
    CU_CHECK(cuGraphNodeGetType(scale, &type));
    CHECK_MESSAGE(type == CU_GRAPH_NODE_TYPE_KERNEL,
                  "R2: the captured launch is not a kernel node of the graph itself");
    const std::vector<CUgraphNode> deps = dependenciesOf(scale);
    CHECK_MESSAGE((deps.size() == 1 && deps[0] == fill),
                  "R1: the captured node does not depend on the fill node alone");
    Exec exec(g.g);
    CU_CHECK(cuGraphLaunch(exec.e, s.get()));
    s.sync();
    CHECK_MESSAGE(allEqual(readFloats(out.get(), n), 7.0f), "R1: the graph did not fill 2, then scale to 7");
  }

  TEST_CASE("R1: after two nodes given, the captured node depends on both; after none, it is a root") {
    requireCaptureToGraph();
    Lab lab;
    Stream s;
    const unsigned n = 1024;
    wbt::DeviceBuffer a(n * sizeof(float)), b(n * sizeof(float));
    {
      Graph g;
      CU_CHECK(cuGraphCreate(&g.g, 0));
      CUgraphNode fa = addFillNode(lab, g.g, a.get(), 1.0f, n), fb = addFillNode(lab, g.g, b.get(), 1.0f, n);
      ex29::appendCaptured(g.g, {fa, fb}, s.get(),
                           [&](CUstream st) { CU_CHECK(launchScale(lab, a.get(), 2.0f, 0.0f, n, st)); });
      std::vector<CUgraphNode> captured;
      for (CUgraphNode node : nodesOf(g.g))
        if (node != fa && node != fb) captured.push_back(node);
      REQUIRE_MESSAGE(captured.size() == 1, "R1: the graph does not hold the one captured node");
      std::vector<CUgraphNode> deps = dependenciesOf(captured[0]);
      std::sort(deps.begin(), deps.end());
      std::vector<CUgraphNode> want{fa, fb};
      std::sort(want.begin(), want.end());
      CHECK_MESSAGE(deps == want, "R1: the captured node depends on " << deps.size() << " node(s), not on both given");
    }
    {
      Graph g;
      CU_CHECK(cuGraphCreate(&g.g, 0));
      CUgraphNode fa = addFillNode(lab, g.g, a.get(), 1.0f, n);
      ex29::appendCaptured(g.g, {}, s.get(),
                           [&](CUstream st) { CU_CHECK(launchScale(lab, b.get(), 2.0f, 0.0f, n, st)); });
      const std::vector<CUgraphNode> nodes = nodesOf(g.g);
      REQUIRE(nodes.size() == 2);
      const CUgraphNode captured = nodes[0] == fa ? nodes[1] : nodes[0];
      CHECK_MESSAGE(dependenciesOf(captured).empty(), "R1: with no node given, the captured node is not a root");
    }
  }

  TEST_CASE("R3: work that throws: the same exception comes through, and the stream is not capturing") {
    requireCaptureToGraph();
    Lab lab;
    Stream s;
    Graph g;
    CU_CHECK(cuGraphCreate(&g.g, 0));
    CHECK_THROWS_AS(ex29::appendCaptured(g.g, {}, s.get(), [](CUstream) { throw std::runtime_error("library"); }),
                    std::runtime_error);
    const CUstreamCaptureStatus status = statusOf(s.get());
    CHECK_MESSAGE(status == CU_STREAM_CAPTURE_STATUS_NONE, "R3: the stream is still capturing after work threw");
    if (status != CU_STREAM_CAPTURE_STATUS_NONE) {  // end it here: the graph it returns is g, destroyed once
      CUgraph left = nullptr;
      cuStreamEndCapture(s.get(), &left);
    }
  }

  TEST_CASE("R4: work that waits for the capturing stream invalidates the capture: wb::DriverError") {
    requireCaptureToGraph();
    Lab lab;
    Stream s;
    Graph g;
    CU_CHECK(cuGraphCreate(&g.g, 0));
    // The programming guide: synchronising a stream that is being captured is invalid, and invalidates it.
    CHECK_THROWS_AS(ex29::appendCaptured(g.g, {}, s.get(), [](CUstream st) { (void)cuStreamSynchronize(st); }),
                    wb::DriverError);
    const CUstreamCaptureStatus status = statusOf(s.get());
    CHECK_MESSAGE(status == CU_STREAM_CAPTURE_STATUS_NONE, "R2: the stream is still capturing");
    if (status != CU_STREAM_CAPTURE_STATUS_NONE) {
      CUgraph left = nullptr;
      cuStreamEndCapture(s.get(), &left);
    }
  }
}

EXERCISE("exec-fill-value", "Change one argument of an instantiated graph, not its template",
         "CUDA_KERNEL_NODE_PARAMS p{}; CU_CHECK(cuGraphKernelNodeGetParams(node, &p)); copy out (kernelParams[0], a "
         "CUdeviceptr) and n (kernelParams[2], an unsigned); point kernelParams at {&out, &value, &n}; then "
         "CU_CHECK(cuGraphExecKernelNodeSetParams(exec, node, &p)).") {
  TEST_CASE("R1 R2: the next launches fill with the new value, and the template node keeps the old one") {
    Lab lab;
    Stream s;
    const unsigned n = 100000;
    wbt::DeviceBuffer out(n * sizeof(float));
    Graph g;
    CU_CHECK(cuGraphCreate(&g.g, 0));
    CUgraphNode node = addFillNode(lab, g.g, out.get(), 1.0f, n);
    Exec exec(g.g);
    ex29::setFillValue(exec.e, node, 4.0f);
    CU_CHECK(cuGraphLaunch(exec.e, s.get()));
    s.sync();
    CHECK_MESSAGE(allEqual(readFloats(out.get(), n), 4.0f),
                  "R1: the executable graph did not fill every element with 4");
    CUDA_KERNEL_NODE_PARAMS kept{};
    CU_CHECK(cuGraphKernelNodeGetParams(node, &kept));
    CHECK_MESSAGE(*static_cast<float*>(kept.kernelParams[1]) == 1.0f, "R2: the template node's value changed");
    ex29::setFillValue(exec.e, node, 9.0f);
    CU_CHECK(cuGraphLaunch(exec.e, s.get()));
    s.sync();
    CHECK_MESSAGE(allEqual(readFloats(out.get(), n), 9.0f), "R1: the second change did not reach every element");
  }

  TEST_CASE("R3: a failed read of the node throws wb::DriverError") {
    Lab lab;
    const unsigned n = 1024;
    wbt::DeviceBuffer out(n * sizeof(float));
    Graph g;
    CU_CHECK(cuGraphCreate(&g.g, 0));
    CUgraphNode node = addFillNode(lab, g.g, out.get(), 1.0f, n);
    Exec exec(g.g);
    wbx::FailCall fail("cuGraphKernelNodeGetParams", CUDA_ERROR_INVALID_VALUE);
    CHECK_THROWS_AS(ex29::setFillValue(exec.e, node, 4.0f), wb::DriverError);
    CHECK_MESSAGE(fail.fired(), "R1: setFillValue did not read the template node's parameters");
  }
}
