// Lesson 29's claims: cuMemAllocAsync and cuMemFreeAsync in a capture become an allocation node and a
// free node holding the captured address and size; a graph holding them cannot be cloned or
// instantiated twice at once, and an executable graph cannot change its allocation node; the graph
// memory attributes keep their high watermarks at or above their current values, the reserved high
// watermark covers an allocation a launch made, only a reset to zero is accepted, and a trim leaves no
// more reserved than before; in a RELAXED capture cuMemAlloc is allowed and not recorded; a kernel
// launched once before a capture is captured and runs in a child with lazy loading; a capture into an
// existing graph appends after the nodes it is given; cuGraphNodeSetParams changes the template and
// cuGraphExecNodeSetParams the executable graph alone.
#include "damaged_images.hpp"
#include "graph_handles.hpp"
#include "process.hpp"
#include "support.hpp"

#include <algorithm>
#include <string>
#include <vector>

namespace {

using wbt::Graph;
using wbt::Exec;

using wbt::functionOf;
using wbt::Stream;

constexpr size_t kMiB = size_t{1} << 20;

// The primary context of device 0, current, and vector_ops' fill and scale, loaded before any capture.
struct Lab {
  wbt::RetainedPrimary primary{wbt::deviceKeepingPrimary(0)};
  wbt::Pushed current{primary.get()};
  CUlibrary vec = nullptr;
  CUfunction fill = nullptr, scale = nullptr;
  bool pools = false;
  Lab() {
    pools = wbt::attribute(wbt::device(0), CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED) != 0;
    CU_CHECK(cuLibraryLoadFromFile(&vec, wb::verifiedImagePath("vector_ops.fatbin").c_str(), nullptr, nullptr, 0,
                                   nullptr, nullptr, 0));
    fill = functionOf(vec, "fill");
    scale = functionOf(vec, "scale");
  }
  ~Lab() { cuLibraryUnload(vec); }
  // Whether the case can run; otherwise it is marked skipped with the reason.
  bool ready() const {
    if (!pools) wbt::skipCase("device 0 has no stream-ordered allocator (MEMORY_POOLS_SUPPORTED 0)");
    return pools;
  }
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

std::vector<float> readFloats(CUdeviceptr p, size_t n) {
  std::vector<float> v(n);
  CU_CHECK(cuMemcpyDtoH(v.data(), p, n * sizeof(float)));
  return v;
}
bool allEqual(const std::vector<float>& v, float value) {
  return std::all_of(v.begin(), v.end(), [&](float x) { return x == value; });
}

// A step captured as engines capture it: workspace allocated, filled, its end copied to result, freed.
struct Step {
  Graph graph;
  CUdeviceptr workspace = 0;
  Step(const Lab& lab, CUstream s, size_t bytes, float value, CUdeviceptr result) {
    const unsigned n = static_cast<unsigned>(bytes / sizeof(float));
    CU_CHECK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CU_CHECK(cuMemAllocAsync(&workspace, bytes, s));
    CU_CHECK(launchFill(lab, workspace, value, n, s));
    CU_CHECK(cuMemcpyDtoDAsync(result, workspace + bytes - 4 * sizeof(float), 4 * sizeof(float), s));
    CU_CHECK(cuMemFreeAsync(workspace, s));
    CU_CHECK(cuStreamEndCapture(s, &graph.g));
  }
};

struct GraphMem {
  cuuint64_t usedCurrent = 0, usedHigh = 0, reservedCurrent = 0, reservedHigh = 0;
};
GraphMem graphMemOf(CUdevice dev) {
  GraphMem m;
  CU_CHECK(cuDeviceGetGraphMemAttribute(dev, CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT, &m.usedCurrent));
  CU_CHECK(cuDeviceGetGraphMemAttribute(dev, CU_GRAPH_MEM_ATTR_USED_MEM_HIGH, &m.usedHigh));
  CU_CHECK(cuDeviceGetGraphMemAttribute(dev, CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT, &m.reservedCurrent));
  CU_CHECK(cuDeviceGetGraphMemAttribute(dev, CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH, &m.reservedHigh));
  return m;
}
void checkHighs(const GraphMem& m) {
  CHECK(m.usedHigh >= m.usedCurrent);
  CHECK(m.reservedHigh >= m.reservedCurrent);
}

}  // namespace

TEST_SUITE("memory-nodes") {
  TEST_CASE("cuMemAllocAsync and cuMemFreeAsync in a capture become one allocation node and one free node, holding the address the capture returned and the size asked for, and the graph runs on every launch") {
    Lab lab;
    if (!lab.ready()) return;
    Stream s;
    wbt::DeviceBuffer result(4 * sizeof(float));
    const size_t bytes = 16 * kMiB;
    Step step(lab, s.get(), bytes, 3.0f, result.get());
    const std::vector<CUgraphNode> allocs = ofType(step.graph.g, CU_GRAPH_NODE_TYPE_MEM_ALLOC);
    const std::vector<CUgraphNode> frees = ofType(step.graph.g, CU_GRAPH_NODE_TYPE_MEM_FREE);
    REQUIRE(allocs.size() == 1);
    REQUIRE(frees.size() == 1);
    CHECK(nodesOf(step.graph.g).size() == 4);  // allocation, kernel, copy, free
    CUDA_MEM_ALLOC_NODE_PARAMS alloc{};
    CU_CHECK(cuGraphMemAllocNodeGetParams(allocs[0], &alloc));
    CHECK(alloc.bytesize == bytes);
    CHECK(alloc.dptr == step.workspace);
    CUdeviceptr freed = 0;
    CU_CHECK(cuGraphMemFreeNodeGetParams(frees[0], &freed));
    CHECK(freed == step.workspace);
    Exec exec(step.graph.g);
    for (int launch = 0; launch < 2; ++launch) {
      CU_CHECK(cuMemsetD32Async(result.get(), 0, 4, s.get()));
      CU_CHECK(cuGraphLaunch(exec.e, s.get()));
      s.sync();
      CHECK(allEqual(readFloats(result.get(), 4), 3.0f));
    }
  }

  TEST_CASE("a graph holding memory nodes cannot be cloned, nor instantiated a second time while one instantiation exists; an executable graph cannot change its allocation node") {
    Lab lab;
    if (!lab.ready()) return;
    Stream s;
    wbt::DeviceBuffer result(4 * sizeof(float));
    Step step(lab, s.get(), 4 * kMiB, 1.0f, result.get());
    // cuGraphAddMemAllocNode: "Only one instantiation of the graph may exist at any point in time" and
    // "The graph cannot be cloned".
    Graph clone;
    CHECK(cuGraphClone(&clone.g, step.graph.g) != CUDA_SUCCESS);
    Exec first(step.graph.g);
    Exec second;
    CHECK(cuGraphInstantiate(&second.e, step.graph.g, 0) != CUDA_SUCCESS);
#if CUDA_VERSION >= 12020
    // cuGraphExecNodeSetParams' table: "memory allocation: API unsupported".
    const CUgraphNode allocNode = ofType(step.graph.g, CU_GRAPH_NODE_TYPE_MEM_ALLOC).at(0);
    CUDA_MEM_ALLOC_NODE_PARAMS alloc{};
    CU_CHECK(cuGraphMemAllocNodeGetParams(allocNode, &alloc));
    CUgraphNodeParams bigger{};
    bigger.type = CU_GRAPH_NODE_TYPE_MEM_ALLOC;
    bigger.alloc.poolProps = alloc.poolProps;
    bigger.alloc.bytesize = 2 * alloc.bytesize;
    CHECK(cuGraphExecNodeSetParams(first.e, allocNode, &bigger) != CUDA_SUCCESS);
#endif
  }
}

TEST_SUITE("graph-pool") {
  TEST_CASE("across launches the high watermarks stay at or above the current values, the reserved high watermark covers what a launch allocated, a trim leaves no more reserved than before, and the used high watermark accepts only a reset to zero") {
    Lab lab;
    if (!lab.ready()) return;
    const CUdevice dev = wbt::device(0);
    Stream s;
    wbt::DeviceBuffer result(4 * sizeof(float));
    const size_t bytes = 64 * kMiB;
    CU_CHECK(cuDeviceGraphMemTrim(dev));
    cuuint64_t zero = 0;
    CU_CHECK(cuDeviceSetGraphMemAttribute(dev, CU_GRAPH_MEM_ATTR_USED_MEM_HIGH, &zero));
    CU_CHECK(cuDeviceSetGraphMemAttribute(dev, CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH, &zero));
    Step step(lab, s.get(), bytes, 1.0f, result.get());
    {
      Exec exec(step.graph.g);
      for (int launch = 0; launch < 3; ++launch) {
        CU_CHECK(cuGraphLaunch(exec.e, s.get()));
        s.sync();
        const GraphMem m = graphMemOf(dev);
        checkHighs(m);
        CHECK(m.reservedHigh >= bytes);
      }
      const GraphMem before = graphMemOf(dev);
      CU_CHECK(cuDeviceGraphMemTrim(dev));
      const GraphMem after = graphMemOf(dev);
      checkHighs(after);
      CHECK(after.reservedCurrent <= before.reservedCurrent);
    }
    const GraphMem destroyed = graphMemOf(dev);
    CU_CHECK(cuDeviceGraphMemTrim(dev));
    const GraphMem trimmed = graphMemOf(dev);
    checkHighs(trimmed);
    CHECK(trimmed.reservedCurrent <= destroyed.reservedCurrent);
    // USED_MEM_HIGH: "High watermark can only be reset to zero"; the current values are not among the
    // settable ones. cuda.h says no such thing of RESERVED_MEM_HIGH: what setting it to 1 does is printed.
    cuuint64_t one = 1;
    CHECK(cuDeviceSetGraphMemAttribute(dev, CU_GRAPH_MEM_ATTR_USED_MEM_HIGH, &one) != CUDA_SUCCESS);
    MESSAGE("cuDeviceSetGraphMemAttribute(RESERVED_MEM_HIGH, 1): "
            << wb::errorName(cuDeviceSetGraphMemAttribute(dev, CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH, &one)) << " (observed)");
    CHECK(cuDeviceSetGraphMemAttribute(dev, CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT, &zero) != CUDA_SUCCESS);
    CHECK(cuDeviceSetGraphMemAttribute(dev, CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT, &zero) != CUDA_SUCCESS);
    CHECK(cuDeviceSetGraphMemAttribute(dev, CU_GRAPH_MEM_ATTR_USED_MEM_HIGH, &zero) == CUDA_SUCCESS);
    CHECK(cuDeviceSetGraphMemAttribute(dev, CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH, &zero) == CUDA_SUCCESS);
  }
}

TEST_SUITE("plain-alloc") {
  TEST_CASE("in a RELAXED capture cuMemAlloc is allowed, the capture stays intact and the allocation is not in the graph; the stream works after a capture ends") {
    Lab lab;
    if (!lab.ready()) return;
    Stream s;
    wbt::DeviceBuffer out(1024 * sizeof(float));
    CU_CHECK(cuStreamBeginCapture(s.get(), CU_STREAM_CAPTURE_MODE_RELAXED));
    CU_CHECK(launchFill(lab, out.get(), 1.0f, 1024, s.get()));
    CUdeviceptr p = 0;
    const CUresult alloc = cuMemAlloc(&p, kMiB);
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    CU_CHECK(cuStreamIsCapturing(s.get(), &status));
    Graph g;
    const CUresult end = cuStreamEndCapture(s.get(), &g.g);
    if (alloc == CUDA_SUCCESS) CU_CHECK(cuMemFree(p));
    CHECK(alloc == CUDA_SUCCESS);
    CHECK(status == CU_STREAM_CAPTURE_STATUS_ACTIVE);
    REQUIRE(end == CUDA_SUCCESS);
    CHECK(nodesOf(g.g).size() == 1);  // the kernel alone
    CU_CHECK(launchFill(lab, out.get(), 3.0f, 1024, s.get()));
    s.sync();
    CHECK(allEqual(readFloats(out.get(), 1024), 3.0f));
  }
}

TEST_SUITE("lazy-loading") {
  TEST_CASE("with CUDA_MODULE_LOADING=LAZY, a kernel launched once before the capture is captured while a gate kernel holds another stream, and the graph runs it (the program's warm child)") {
    Lab lab;
    if (!lab.ready()) return;
    std::vector<std::string> env;
    for (const std::string& name : wb::variablesButDeviceChoice())
      if (name != "CUDA_MODULE_LOADING") env.push_back(name);
    env.push_back("CUDA_MODULE_LOADING=LAZY");
    const wb::ProcessEnd child = wb::runProcess({WORKBOOK_LESSON_PROGRAM, "--child", "warm"}, env, 60);
    INFO(child.output);
    CHECK_FALSE(child.timedOut);
    CHECK(child.signal == 0);
    CHECK(child.code == 0);
    CHECK(child.output.find("loading mode LAZY") != std::string::npos);
  }
}

#if CUDA_VERSION >= 12030
TEST_SUITE("capture-to-graph") {
  TEST_CASE("cuStreamBeginCaptureToGraph appends the captured launch to the graph, after the node given; cuGraphNodeSetParams changes the template, cuGraphExecNodeSetParams the executable graph alone") {
    Lab lab;
    Stream s;
    const unsigned n = 4096;
    wbt::DeviceBuffer out(n * sizeof(float));
    Graph g;
    CU_CHECK(cuGraphCreate(&g.g, 0));
    CUdeviceptr ptr = out.get();
    float value = 1.0f;
    unsigned count = n;
    void* args[] = {&ptr, &value, &count};
    CUDA_KERNEL_NODE_PARAMS p{};
    p.func = lab.fill;
    p.gridDimX = 64, p.gridDimY = p.gridDimZ = 1;
    p.blockDimX = 256, p.blockDimY = p.blockDimZ = 1;
    p.kernelParams = args;
    CUgraphNode fill = nullptr;
    CU_CHECK(cuGraphAddKernelNode(&fill, g.g, nullptr, 0, &p));
    CU_CHECK(cuStreamBeginCaptureToGraph(s.get(), g.g, &fill, nullptr, 1, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CU_CHECK(launchScale(lab, out.get(), 3.0f, 1.0f, n, s.get()));
    CUgraph captured = nullptr;
    CU_CHECK(cuStreamEndCapture(s.get(), &captured));
    const std::vector<CUgraphNode> nodes = nodesOf(g.g);
    REQUIRE(nodes.size() == 2);
    size_t edges = 0;
    CU_CHECK(cuGraphGetEdges_v2(g.g, nullptr, nullptr, nullptr, &edges));
    REQUIRE(edges == 1);
    CUgraphNode from = nullptr, to = nullptr;
    CU_CHECK(cuGraphGetEdges_v2(g.g, &from, &to, nullptr, &edges));
    CHECK(from == fill);
    CHECK(to != fill);
    // The template: fill 2, so the graph leaves 2 * 3 + 1.
    value = 2.0f;
    CUgraphNodeParams generic{};
    generic.type = CU_GRAPH_NODE_TYPE_KERNEL;
    generic.kernel.func = lab.fill;
    generic.kernel.gridDimX = 64, generic.kernel.gridDimY = generic.kernel.gridDimZ = 1;
    generic.kernel.blockDimX = 256, generic.kernel.blockDimY = generic.kernel.blockDimZ = 1;
    generic.kernel.kernelParams = args;
    CU_CHECK(cuGraphNodeSetParams(fill, &generic));
    Exec exec(g.g);
    CU_CHECK(cuGraphLaunch(exec.e, s.get()));
    s.sync();
    CHECK(allEqual(readFloats(out.get(), n), 7.0f));
    value = 5.0f;  // the executable graph alone
    CU_CHECK(cuGraphExecNodeSetParams(exec.e, fill, &generic));
    CU_CHECK(cuGraphLaunch(exec.e, s.get()));
    s.sync();
    CHECK(allEqual(readFloats(out.get(), n), 16.0f));
    CUDA_KERNEL_NODE_PARAMS kept{};
    CU_CHECK(cuGraphKernelNodeGetParams(fill, &kept));
    CHECK(*static_cast<float*>(kept.kernelParams[1]) == 2.0f);
    if (captured && captured != g.g) cuGraphDestroy(captured);
  }
}
#endif

TEST_SUITE("damaged-images") {
  TEST_CASE("pointed at an empty folder or at damaged images, the program stops in seconds, naming the file") {
    wbt::checkProgramRefusesDamagedImages(WORKBOOK_LESSON_PROGRAM);
  }
}
