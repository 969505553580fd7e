// Lesson 29: graph memory, as engines capture.
//
// What you learn: what happens to the allocations an engine makes while it captures a step. A
// stream-ordered cuMemAllocAsync / cuMemFreeAsync in a capture becomes a memory allocation node and
// a memory free node, owned by the graph, at an address fixed for the graph's life; the memory behind
// them comes from the device's graph memory pool, which the four CU_GRAPH_MEM_ATTR_* attributes
// report, which is kept across launches and given back by cuDeviceGraphMemTrim. A plain cuMemAlloc
// in a capture is what the reference calls potentially unsafe: how this driver answered it in a
// GLOBAL capture, and what a RELAXED capture allows (an allocation the graph does not record). Why an
// engine launches every kernel once before it captures (lazy loading, the default), shown in child
// processes with the loading mode set. Capturing into a graph you already hold
// (cuStreamBeginCaptureToGraph, 12.3) and changing a node with the generic calls of 12.2
// (cuGraphNodeSetParams, cuGraphExecNodeSetParams). Last, the device memory of one step over its
// launches, with its workspace as memory nodes and with one workspace from a pool outside the graph,
// against the device's total.
//
// APIs: cuMemAllocAsync, cuMemFreeAsync, cuStreamBeginCapture, cuStreamEndCapture, cuGraphGetNodes,
//       cuGraphNodeGetType, cuGraphMemAllocNodeGetParams, cuGraphMemFreeNodeGetParams,
//       cuDeviceGetGraphMemAttribute, cuDeviceSetGraphMemAttribute, cuDeviceGraphMemTrim,
//       cuMemAlloc, cuStreamIsCapturing, cuModuleGetLoadingMode, cuStreamBeginCaptureToGraph,
//       cuGraphAddKernelNode, cuGraphGetEdges, cuGraphNodeSetParams, cuGraphExecNodeSetParams,
//       cuGraphInstantiate, cuGraphLaunch, cuMemGetInfo
// Run:  ctest -R lesson29   (or build/lessons/lesson29-graph-memory [--csv lesson29-figure.csv])
#include "figure.hpp"
#include "gate.hpp"
#include "process.hpp"
#include "workbook.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <utility>
#include <vector>

constexpr size_t kMiB = size_t{1} << 20;

struct Kernels {
  CUfunction fill = nullptr, scale = nullptr;  // kernels/vector_ops.cu
};

CUfunction functionOf(CUlibrary library, const char* name) {
  CUkernel kernel = nullptr;
  CU_CHECK(cuLibraryGetKernel(&kernel, library, name));
  CUfunction f = nullptr;
  CU_CHECK(cuKernelGetFunction(&f, kernel));
  return f;
}

CUstream newStream() {
  CUstream s = nullptr;
  CU_CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  return s;
}

// fill(out, value, n) and scale(data, factor, offset, n) over 256 blocks of 256 threads (they
// stride over the rest).
CUresult launchFill(CUfunction fill, CUdeviceptr out, float value, unsigned n, CUstream s) {
  void* args[] = {&out, &value, &n};
  return cuLaunchKernel(fill, 256, 1, 1, 256, 1, 1, 0, s, args, nullptr);
}
CUresult launchScale(CUfunction scale, CUdeviceptr data, float factor, float offset, unsigned n, CUstream s) {
  void* args[] = {&data, &factor, &offset, &n};
  return cuLaunchKernel(scale, 256, 1, 1, 256, 1, 1, 0, s, args, nullptr);
}

std::vector<CUgraphNode> nodesOf(CUgraph graph) {
  size_t n = 0;
  CU_CHECK(cuGraphGetNodes(graph, nullptr, &n));
  std::vector<CUgraphNode> nodes(n);
  if (n) CU_CHECK(cuGraphGetNodes(graph, nodes.data(), &n));
  return nodes;
}

CUgraphNodeType typeOf(CUgraphNode node) {
  CUgraphNodeType t{};
  CU_CHECK(cuGraphNodeGetType(node, &t));
  return t;
}

const char* typeName(CUgraphNodeType t) {
  switch (t) {
    case CU_GRAPH_NODE_TYPE_KERNEL: return "kernel";
    case CU_GRAPH_NODE_TYPE_MEMCPY: return "memcpy";
    case CU_GRAPH_NODE_TYPE_MEM_ALLOC: return "memory allocation";
    case CU_GRAPH_NODE_TYPE_MEM_FREE: return "memory free";
    default: return "other";
  }
}

CUgraphNode firstOfType(CUgraph graph, CUgraphNodeType type) {
  for (CUgraphNode node : nodesOf(graph))
    if (typeOf(node) == type) return node;
  return nullptr;
}

std::vector<float> readFloats(CUdeviceptr p, size_t n) {
  std::vector<float> v(n);
  CU_CHECK(cuMemcpyDtoH(v.data(), p, n * sizeof(float)));
  return v;
}
bool allEqual(const std::vector<float>& v, float value) {
  return std::all_of(v.begin(), v.end(), [&](float x) { return x == value; });
}

//! [graph-mem]
// The four attributes of the device's graph memory, in bytes.
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
// "High watermark can only be reset to zero": both high watermarks, set to 0.
void resetHighs(CUdevice dev) {
  cuuint64_t zero = 0;
  CU_CHECK(cuDeviceSetGraphMemAttribute(dev, CU_GRAPH_MEM_ATTR_USED_MEM_HIGH, &zero));
  CU_CHECK(cuDeviceSetGraphMemAttribute(dev, CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH, &zero));
}
//! [graph-mem]

// Device memory in use, as cuMemGetInfo reports it (every process's, and the driver's own).
size_t deviceUsed() {
  size_t freeBytes = 0, total = 0;
  CU_CHECK(cuMemGetInfo(&freeBytes, &total));
  return total - freeBytes;
}

//! [capture-step]
// One step as an engine captures it: a workspace from cuMemAllocAsync, a kernel that fills it, a
// copy of its last four floats into `result` (memory from outside the graph), the workspace freed
// with cuMemFreeAsync. The allocation and the free are captured like the launch: they become nodes.
CUgraph captureStep(const Kernels& k, CUstream s, size_t bytes, float value, CUdeviceptr result,
                    CUdeviceptr* workspace = nullptr) {
  CUdeviceptr scratch = 0;
  const unsigned n = static_cast<unsigned>(bytes / sizeof(float));
  CU_CHECK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
  CU_CHECK(cuMemAllocAsync(&scratch, bytes, s));
  CU_CHECK(launchFill(k.fill, scratch, value, n, s));
  CU_CHECK(cuMemcpyDtoDAsync(result, scratch + bytes - 4 * sizeof(float), 4 * sizeof(float), s));
  CU_CHECK(cuMemFreeAsync(scratch, s));
  CUgraph graph = nullptr;
  CU_CHECK(cuStreamEndCapture(s, &graph));
  if (workspace) *workspace = scratch;
  return graph;
}
//! [capture-step]

void memoryNodes(const Kernels& k) {
  CUstream s = newStream();
  CUdeviceptr result = 0;
  CU_CHECK(cuMemAlloc(&result, 4 * sizeof(float)));
  const size_t bytes = 32 * kMiB;
  CUdeviceptr workspace = 0;
  CUgraph graph = captureStep(k, s, bytes, 2.0f, result, &workspace);
  //! [memory-nodes]
  std::printf("the capture made these nodes:");
  for (CUgraphNode node : nodesOf(graph)) std::printf(" [%s]", typeName(typeOf(node)));
  std::printf("\n");
  CUDA_MEM_ALLOC_NODE_PARAMS alloc{};
  CU_CHECK(cuGraphMemAllocNodeGetParams(firstOfType(graph, CU_GRAPH_NODE_TYPE_MEM_ALLOC), &alloc));
  CUdeviceptr freed = 0;
  CU_CHECK(cuGraphMemFreeNodeGetParams(firstOfType(graph, CU_GRAPH_NODE_TYPE_MEM_FREE), &freed));
  std::printf("allocation node: %zu bytes at 0x%llx; cuMemAllocAsync returned 0x%llx in the capture; "
              "the free node frees 0x%llx\n", alloc.bytesize, static_cast<unsigned long long>(alloc.dptr),
              static_cast<unsigned long long>(workspace), static_cast<unsigned long long>(freed));
  //! [memory-nodes]
  wb::expect(alloc.dptr == workspace && freed == workspace && alloc.bytesize == bytes,
             "an allocation node holding the captured allocation, and a free node freeing it",
             "the nodes hold another address or size");
  CUgraphExec exec = nullptr;
  CU_CHECK(cuGraphInstantiate(&exec, graph, 0));
  for (int launch = 1; launch <= 2; ++launch) {
    CU_CHECK(cuMemsetD32Async(result, 0, 4, s));
    CU_CHECK(cuGraphLaunch(exec, s));
    CU_CHECK(cuStreamSynchronize(s));
    const std::vector<float> r = readFloats(result, 4);
    std::printf("launch %d: the step's result reads %.1f %.1f %.1f %.1f\n", launch, r[0], r[1], r[2], r[3]);
    wb::expect(allEqual(r, 2.0f), "the workspace filled and copied on every launch", "other values");
  }
#if CUDA_VERSION >= 12020
  //! [alloc-node-fixed]
  // cuGraphExecNodeSetParams' table: "memory allocation: API unsupported". An allocation node's size
  // and address are fixed once the graph is instantiated.
  CUgraphNodeParams bigger{};
  bigger.type = CU_GRAPH_NODE_TYPE_MEM_ALLOC;
  bigger.alloc.poolProps = alloc.poolProps;
  bigger.alloc.bytesize = 2 * bytes;
  const CUgraphNode allocNode = firstOfType(graph, CU_GRAPH_NODE_TYPE_MEM_ALLOC);
  const CUresult r = cuGraphExecNodeSetParams(exec, allocNode, &bigger);
  std::printf("cuGraphExecNodeSetParams on the allocation node (twice the size): %s\n",
              wb::errorName(r).c_str());
  //! [alloc-node-fixed]
  wb::expect(r != CUDA_SUCCESS, "an allocation node that an executable graph cannot change",
             "cuGraphExecNodeSetParams accepted it");
#endif
  CU_CHECK(cuGraphExecDestroy(exec));
  CU_CHECK(cuGraphDestroy(graph));
  CU_CHECK(cuMemFree(result));
  CU_CHECK(cuStreamDestroy(s));
}

void printMem(const char* when, const GraphMem& m, size_t baseline) {
  std::printf("%-30s %8.0f %8.0f %8.0f %8.0f %9.0f\n", when, m.usedCurrent / double(kMiB), m.usedHigh / double(kMiB),
              m.reservedCurrent / double(kMiB), m.reservedHigh / double(kMiB),
              (static_cast<double>(deviceUsed()) - static_cast<double>(baseline)) / double(kMiB));
}

void graphPool(const Kernels& k, CUdevice dev) {
  CUstream s = newStream();
  CUdeviceptr result = 0;
  CU_CHECK(cuMemAlloc(&result, 4 * sizeof(float)));
  CU_CHECK(cuDeviceGraphMemTrim(dev));  // what step 1 left in the pool, given back first
  resetHighs(dev);
  const size_t baseline = deviceUsed();
  std::printf("%-30s %8s %8s %8s %8s %9s\n", "MiB", "used", "used hi", "reserved", "res. hi", "device +");
  std::vector<GraphMem> seen;
  auto note = [&](const char* when) {
    seen.push_back(graphMemOf(dev));
    printMem(when, seen.back(), baseline);
  };
  note("start (trimmed, highs reset)");
  CUgraph graph = captureStep(k, s, 64 * kMiB, 1.0f, result);
  note("captured");
  CUgraphExec exec = nullptr;
  CU_CHECK(cuGraphInstantiate(&exec, graph, 0));
  note("instantiated");
  //! [pool-launches]
  for (const char* when : {"launch 1", "launch 2", "launch 3"}) {
    CU_CHECK(cuGraphLaunch(exec, s));
    CU_CHECK(cuStreamSynchronize(s));
    note(when);
  }
  CU_CHECK(cuDeviceGraphMemTrim(dev));
  note("trimmed, the graph idle");
  const GraphMem idleTrimmed = seen.back();
  CU_CHECK(cuGraphExecDestroy(exec));
  note("executable graph destroyed");
  CU_CHECK(cuDeviceGraphMemTrim(dev));
  note("trimmed again");
  //! [pool-launches]
  for (const GraphMem& m : seen)
    wb::expect(m.usedHigh >= m.usedCurrent && m.reservedHigh >= m.reservedCurrent,
               "high watermarks at or above the current values", "a high watermark below its current value");
  wb::expect(seen.back().reservedCurrent <= idleTrimmed.reservedCurrent,
             "a trim that leaves no more reserved than before", "more reserved after the trim");
  std::printf("after the last trim the graph memory pool reserves %s\n",
              seen.back().reservedCurrent == 0 ? "nothing" : "memory still");
  //! [reset]
  // "High watermark can only be reset to zero": another value, or a current value, is refused.
  cuuint64_t one = 1, zero = 0;
  const CUresult toOne = cuDeviceSetGraphMemAttribute(dev, CU_GRAPH_MEM_ATTR_USED_MEM_HIGH, &one);
  const CUresult current = cuDeviceSetGraphMemAttribute(dev, CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT, &zero);
  std::printf("set USED_MEM_HIGH to 1: %s; set USED_MEM_CURRENT to 0: %s\n", wb::errorName(toOne).c_str(),
              wb::errorName(current).c_str());
  //! [reset]
  wb::expect(toOne != CUDA_SUCCESS && current != CUDA_SUCCESS, "both refused", "one was accepted");
  resetHighs(dev);
  const GraphMem reset = graphMemOf(dev);
  std::printf("after a reset to zero: used high %llu, reserved high %llu bytes\n",
              static_cast<unsigned long long>(reset.usedHigh), static_cast<unsigned long long>(reset.reservedHigh));
  CU_CHECK(cuGraphDestroy(graph));
  CU_CHECK(cuMemFree(result));
  CU_CHECK(cuStreamDestroy(s));
}

//! [plain-alloc]
// A caching allocator's cuMemAlloc, called while the stream it serves is capturing: a kernel is
// captured, then the allocator asks the driver for memory.
struct PlainAlloc {
  CUresult alloc, end;
  CUstreamCaptureStatus statusAfter;
  size_t nodes;
};
PlainAlloc plainAllocInCapture(const Kernels& k, CUstream s, CUdeviceptr out, CUstreamCaptureMode mode) {
  PlainAlloc r{};
  CU_CHECK(cuStreamBeginCapture(s, mode));
  CU_CHECK(launchFill(k.fill, out, 1.0f, 1024, s));
  CUdeviceptr p = 0;
  r.alloc = cuMemAlloc(&p, kMiB);
  CU_CHECK(cuStreamIsCapturing(s, &r.statusAfter));
  CUgraph graph = nullptr;
  r.end = cuStreamEndCapture(s, &graph);
  r.nodes = graph ? nodesOf(graph).size() : 0;
  if (graph) CU_CHECK(cuGraphDestroy(graph));
  if (r.alloc == CUDA_SUCCESS) CU_CHECK(cuMemFree(p));  // the allocator's own memory: no graph holds it
  return r;
}
//! [plain-alloc]

const char* statusName(CUstreamCaptureStatus st) {
  return st == CU_STREAM_CAPTURE_STATUS_ACTIVE        ? "ACTIVE"
         : st == CU_STREAM_CAPTURE_STATUS_INVALIDATED ? "INVALIDATED"
                                                      : "NONE";
}

void plainAllocations(const Kernels& k) {
  CUstream s = newStream();
  CUdeviceptr out = 0;
  CU_CHECK(cuMemAlloc(&out, 1024 * sizeof(float)));
  const PlainAlloc global = plainAllocInCapture(k, s, out, CU_STREAM_CAPTURE_MODE_GLOBAL);
  const PlainAlloc relaxed = plainAllocInCapture(k, s, out, CU_STREAM_CAPTURE_MODE_RELAXED);
  const std::pair<const char*, PlainAlloc> runs[] = {{"GLOBAL", global}, {"RELAXED", relaxed}};
  for (const auto& run : runs)
    std::printf("%-8s capture: cuMemAlloc %s, the capture then %s, cuStreamEndCapture %s, a graph of %zu node(s)\n",
                run.first, wb::errorName(run.second.alloc).c_str(), statusName(run.second.statusAfter),
                wb::errorName(run.second.end).c_str(), run.second.nodes);
  //! [plain-alloc-2]
  // The reference names no call as potentially unsafe: what GLOBAL did is printed above. In RELAXED
  // mode "the local thread is not prohibited from potentially unsafe API calls", and such an
  // allocation "is not enqueued asynchronously to a stream, and is not observed by stream capture".
  wb::expect(relaxed.alloc == CUDA_SUCCESS && relaxed.end == CUDA_SUCCESS && relaxed.nodes == 1,
             "in a RELAXED capture cuMemAlloc allowed, the capture intact, the allocation not in the graph",
             "RELAXED gave " + wb::errorName(relaxed.alloc) + ", end " + wb::errorName(relaxed.end) + ", " +
                 std::to_string(relaxed.nodes) + " node(s)");
  //! [plain-alloc-2]
  // After a capture that failed, the stream works again.
  CU_CHECK(launchFill(k.fill, out, 3.0f, 1024, s));
  CU_CHECK(cuStreamSynchronize(s));
  wb::expect(allEqual(readFloats(out, 1024), 3.0f), "the stream working after the capture ended", "it did not");
  CU_CHECK(cuMemFree(out));
  CU_CHECK(cuStreamDestroy(s));
}

// A child process, started with CUDA_MODULE_LOADING=LAZY: a kernel captured at its first use in the
// context (cold), or after one launch before the capture (warm), while a gate kernel holds another
// stream. Prints what happened; exits 0 when the capture made a graph that ran correctly.
int lazyChild(bool warm) {
  CU_CHECK(cuInit(0));
  CUdevice dev = 0;
  CU_CHECK(cuDeviceGet(&dev, 0));
  CUcontext ctx = nullptr;
  CU_CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
  CU_CHECK(cuCtxSetCurrent(ctx));
  CUmoduleLoadingMode mode{};
  CU_CHECK(cuModuleGetLoadingMode(&mode));
  CUlibrary vec = nullptr, streams = nullptr;
  CU_CHECK(cuLibraryLoadFromFile(&vec, wb::verifiedImagePath("vector_ops.fatbin").c_str(), nullptr, nullptr, 0,
                                 nullptr, nullptr, 0));
  CU_CHECK(cuLibraryLoadFromFile(&streams, wb::verifiedImagePath("streams.fatbin").c_str(), nullptr, nullptr, 0,
                                 nullptr, nullptr, 0));
  const wb::StreamKernels sk = wb::StreamKernels::load(streams);  // the gate, loaded before it closes
  CUkernel fill = nullptr;
  CU_CHECK(cuLibraryGetKernel(&fill, vec, "fill"));
  const unsigned n = 1 << 20;
  CUdeviceptr out = 0;
  CU_CHECK(cuMemAlloc(&out, n * sizeof(float)));
  //! [lazy-child]
  if (warm) {  // an engine's warm-up: every kernel once, before the capture
    CU_CHECK(launchFill(reinterpret_cast<CUfunction>(fill), out, 0.0f, n, nullptr));
    CU_CHECK(cuCtxSynchronize());
  }
  CUstream a = newStream(), b = newStream();
  CUresult launch = CUDA_SUCCESS, end = CUDA_SUCCESS;
  bool gateStillClosed = false;
  CUgraph graph = nullptr;
  {
    wb::Gate gate(sk.gate, a, 10.0);  // stream a busy until opened
    std::atomic<bool> returned{false};
    std::thread opener([&] {  // opens the gate once the launch has returned, or after 1 s
      const wb::Stopwatch clock;
      while (!returned.load() && clock.ms() < 1000) std::this_thread::yield();
      gate.open();
    });
    CU_CHECK(cuStreamBeginCapture(b, CU_STREAM_CAPTURE_MODE_GLOBAL));
    launch = launchFill(reinterpret_cast<CUfunction>(fill), out, 7.0f, n, b);  // a CUkernel launches as is
    gateStillClosed = gate.outcome() == wb::Gate::Waiting;
    returned = true;
    opener.join();
    end = cuStreamEndCapture(b, &graph);
  }
  //! [lazy-child]
  bool ran = false;
  if (graph) {
    CUgraphExec exec = nullptr;
    CU_CHECK(cuGraphInstantiate(&exec, graph, 0));
    CU_CHECK(cuGraphLaunch(exec, b));
    CU_CHECK(cuStreamSynchronize(b));
    ran = allEqual(readFloats(out, n), 7.0f);
    CU_CHECK(cuGraphExecDestroy(exec));
    CU_CHECK(cuGraphDestroy(graph));
  }
  std::printf("loading mode %s; %s; the launch in the capture: %s, returned while a gate kernel held another "
              "stream: %s; cuStreamEndCapture: %s; the graph ran and filled every element: %s\n",
              mode == CU_MODULE_LAZY_LOADING ? "LAZY" : "EAGER",
              warm ? "fill launched once before the capture" : "fill never launched before it",
              wb::errorName(launch).c_str(), gateStillClosed ? "yes" : "no", wb::errorName(end).c_str(),
              ran ? "yes" : "no");
  CU_CHECK(cuStreamDestroy(b));
  CU_CHECK(cuStreamDestroy(a));
  CU_CHECK(cuMemFree(out));
  CU_CHECK(cuLibraryUnload(streams));
  CU_CHECK(cuLibraryUnload(vec));
  CU_CHECK(cuCtxSetCurrent(nullptr));
  CU_CHECK(cuDevicePrimaryCtxRelease(dev));
  return launch == CUDA_SUCCESS && end == CUDA_SUCCESS && ran ? 0 : 1;
}

// The children run with none of the user's CUDA variables but the device choice, and with the
// loading mode set: lazy, the documented default on Linux since CUDA 12.2, written out.
std::vector<std::string> lazyEnvironment() {
  std::vector<std::string> env;
  for (const std::string& name : wb::variablesButDeviceChoice())
    if (name != "CUDA_MODULE_LOADING") env.push_back(name);
  env.push_back("CUDA_MODULE_LOADING=LAZY");
  return env;
}

void lazyLoading() {
  //! [lazy-parent]
  for (const char* kind : {"cold", "warm"}) {
    const wb::ProcessEnd child = wb::runProcess({wb::selfPath(), "--child", kind}, lazyEnvironment(), 60);
    std::printf("%s child (exit %d%s): %s", kind, child.code, child.timedOut ? ", timed out" : "",
                child.output.c_str());
    if (std::strcmp(kind, "warm") == 0)
      wb::expect(!child.timedOut && child.signal == 0 && child.code == 0,
                 "a kernel launched once before the capture captured and run correctly",
                 "the warm child ended with exit " + std::to_string(child.code));
  }
  //! [lazy-parent]
}

#if CUDA_VERSION >= 12030
// fill(out, value, n) as a kernel node, in the generic form of CUDA 12.2 (CUgraphNodeParams).
struct FillParams {
  CUdeviceptr out;
  float value;
  unsigned n;
  void* args[3] = {&out, &value, &n};
  CUgraphNodeParams node(CUfunction fill) {
    CUgraphNodeParams p{};
    p.type = CU_GRAPH_NODE_TYPE_KERNEL;
    p.kernel.func = fill;
    p.kernel.gridDimX = p.kernel.blockDimX = 256;
    p.kernel.gridDimY = p.kernel.gridDimZ = p.kernel.blockDimY = p.kernel.blockDimZ = 1;
    p.kernel.kernelParams = args;
    return p;
  }
};

void captureIntoGraph(const Kernels& k) {
  CUstream s = newStream();
  const unsigned n = 1 << 16;
  CUdeviceptr out = 0;
  CU_CHECK(cuMemAlloc(&out, n * sizeof(float)));
  //! [capture-to-graph]
  // A graph the engine built by hand: one fill node. Then a capture appends to it, after that node.
  CUgraph graph = nullptr;
  CU_CHECK(cuGraphCreate(&graph, 0));
  FillParams fp{out, 1.0f, n};
  CUDA_KERNEL_NODE_PARAMS kernelParams{};
  kernelParams.func = k.fill;
  kernelParams.gridDimX = kernelParams.blockDimX = 256;
  kernelParams.gridDimY = kernelParams.gridDimZ = kernelParams.blockDimY = kernelParams.blockDimZ = 1;
  kernelParams.kernelParams = fp.args;
  CUgraphNode fillNode = nullptr;
  CU_CHECK(cuGraphAddKernelNode(&fillNode, graph, nullptr, 0, &kernelParams));
  CU_CHECK(cuStreamBeginCaptureToGraph(s, graph, &fillNode, nullptr, 1, CU_STREAM_CAPTURE_MODE_GLOBAL));
  CU_CHECK(launchScale(k.scale, out, 3.0f, 1.0f, n, s));  // out = out * 3 + 1
  CUgraph captured = nullptr;
  CU_CHECK(cuStreamEndCapture(s, &captured));
  //! [capture-to-graph]
  size_t edges = 0;
  CU_CHECK(cuGraphGetEdges_v2(graph, nullptr, nullptr, nullptr, &edges));
  std::vector<CUgraphNode> from(edges), to(edges);
  if (edges) CU_CHECK(cuGraphGetEdges_v2(graph, from.data(), to.data(), nullptr, &edges));
  const std::vector<CUgraphNode> nodes = nodesOf(graph);
  const bool afterFill = edges == 1 && from[0] == fillNode && typeOf(to[0]) == CU_GRAPH_NODE_TYPE_KERNEL;
  std::printf("cuStreamEndCapture gave back %s graph; it holds %zu nodes and %zu edge(s), the captured kernel "
              "after the fill node: %s\n", captured == graph ? "the same" : "another", nodes.size(), edges,
              afterFill ? "yes" : "no");
  wb::expect(nodes.size() == 2 && afterFill, "the captured launch in the graph, after the node it was given",
             "another shape");
  //! [set-params]
  fp.value = 2.0f;  // the template: cuGraphNodeSetParams, before instantiating
  CUgraphNodeParams params = fp.node(k.fill);
  CU_CHECK(cuGraphNodeSetParams(fillNode, &params));
  CUgraphExec exec = nullptr;
  CU_CHECK(cuGraphInstantiate(&exec, graph, 0));
  CU_CHECK(cuGraphLaunch(exec, s));
  CU_CHECK(cuStreamSynchronize(s));
  const float first = readFloats(out, 1)[0];
  fp.value = 5.0f;  // the executable graph alone: "hNode is also not modified by this call"
  params = fp.node(k.fill);
  CU_CHECK(cuGraphExecNodeSetParams(exec, fillNode, &params));
  CU_CHECK(cuGraphLaunch(exec, s));
  CU_CHECK(cuStreamSynchronize(s));
  const float second = readFloats(out, 1)[0];
  CUDA_KERNEL_NODE_PARAMS kept{};
  CU_CHECK(cuGraphKernelNodeGetParams(fillNode, &kept));
  const float templateValue = *static_cast<float*>(kept.kernelParams[1]);
  //! [set-params]
  std::printf("fill 2, then scale: %.1f; after cuGraphExecNodeSetParams (fill 5): %.1f; the template's node "
              "still fills %.1f\n", first, second, templateValue);
  wb::expect(first == 7.0f && second == 16.0f && templateValue == 2.0f,
             "7 (2*3+1), then 16 (5*3+1) with the template unchanged", "other values");
  CU_CHECK(cuGraphExecDestroy(exec));
  if (captured && captured != graph) CU_CHECK(cuGraphDestroy(captured));
  CU_CHECK(cuGraphDestroy(graph));
  CU_CHECK(cuMemFree(out));
  CU_CHECK(cuStreamDestroy(s));
}
#endif

// Four graphs, one per batch size as an engine captures them, each needing a 256 MiB workspace.
// With memory nodes each graph allocates and frees its own; with a pool outside, one workspace is
// allocated before the captures (from the device's default pool) and every graph uses it. The
// graphs run in turn in one stream, three rounds; after each launch, the device memory in use
// above what it was before the ways' own allocations.
struct Way {
  const char* name;
  std::vector<double> usedMiB;
};
Way stepOverLaunches(const Kernels& k, CUdevice dev, bool memoryNodes) {
  const size_t bytes = 256 * kMiB;
  const unsigned n = static_cast<unsigned>(bytes / sizeof(float));
  CU_CHECK(cuDeviceGraphMemTrim(dev));
  CUstream s = newStream();
  CUdeviceptr result = 0;
  CU_CHECK(cuMemAlloc(&result, 4 * sizeof(float)));
  const size_t baseline = deviceUsed();
  CUdeviceptr shared = 0;
  if (!memoryNodes) CU_CHECK(cuMemAllocAsync(&shared, bytes, s));
  std::vector<CUgraphExec> execs;
  //! [figure]
  for (int g = 0; g < 4; ++g) {
    CUgraph graph = nullptr;
    if (memoryNodes) {
      graph = captureStep(k, s, bytes, float(g), result);
    } else {
      CU_CHECK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
      CU_CHECK(launchFill(k.fill, shared, float(g), n, s));
      CU_CHECK(cuMemcpyDtoDAsync(result, shared + bytes - 4 * sizeof(float), 4 * sizeof(float), s));
      CU_CHECK(cuStreamEndCapture(s, &graph));
    }
    CUgraphExec exec = nullptr;
    CU_CHECK(cuGraphInstantiate(&exec, graph, 0));
    CU_CHECK(cuGraphDestroy(graph));
    execs.push_back(exec);
  }
  //! [figure]
  Way way{memoryNodes ? "memory nodes in each graph" : "one workspace from a pool outside", {}};
  for (int launch = 0; launch < 12; ++launch) {
    CU_CHECK(cuGraphLaunch(execs[launch % 4], s));
    CU_CHECK(cuStreamSynchronize(s));
    wb::expect(readFloats(result, 4)[0] == float(launch % 4), "each graph's own result", "another graph's");
    way.usedMiB.push_back((double(deviceUsed()) - double(baseline)) / double(kMiB));
  }
  for (CUgraphExec e : execs) CU_CHECK(cuGraphExecDestroy(e));
  if (!memoryNodes) CU_CHECK(cuMemFreeAsync(shared, s));
  CU_CHECK(cuStreamSynchronize(s));
  CU_CHECK(cuMemFree(result));
  CU_CHECK(cuStreamDestroy(s));
  CU_CHECK(cuDeviceGraphMemTrim(dev));
  return way;
}

wb::FigureTable figureOf(const std::vector<Way>& ways, size_t totalBytes) {
  wb::FigureTable table("launch,way,MiB of device memory");
  for (const Way& w : ways)
    for (size_t i = 0; i < w.usedMiB.size(); ++i)
      table.row("%zu,%s,%.0f", i + 1, w.name, std::max(w.usedMiB[i], 1.0));  // a log axis: at least 1
  if (!ways.empty()) table.row("0,limit: the device's total memory,%.0f", double(totalBytes) / double(kMiB));
  return table;
}

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "--child") == 0) {
    try {
      return lazyChild(std::strcmp(argv[2], "warm") == 0);
    } catch (...) {
      return wb::reportFatal(std::current_exception());
    }
  }
  wb::FigurePaths paths;
  if (!wb::parseFigureArgs(argc, argv, paths, "lesson29-figure.csv")) return wb::kExitUsage;
  try {
    wb::checkEnvironment({
        {"CUDA_MODULE_LOADING", wb::Under::Controls,
         "step 4's children run with CUDA_MODULE_LOADING=LAZY; this process loads its kernels before it captures"},
        {"CUDA_LAUNCH_BLOCKING", wb::Under::Stops, "step 4's gate kernel would make its own launch wait for the gate"},
    });
    const std::string vectorImage = wb::verifiedImagePath("vector_ops.fatbin");
    wb::verifiedImagePath("streams.fatbin");  // step 4's children load it: checked before they start
    CU_CHECK(cuInit(0));
    CUdevice dev = 0;
    CU_CHECK(cuDeviceGet(&dev, 0));
    CUcontext primary = nullptr;
    CU_CHECK(cuDevicePrimaryCtxRetain(&primary, dev));
    CU_CHECK(cuCtxSetCurrent(primary));
    int pools = 0;
    CU_CHECK(cuDeviceGetAttribute(&pools, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, dev));
    size_t freeBytes = 0, total = 0;
    CU_CHECK(cuMemGetInfo(&freeBytes, &total));
    std::printf("device 0: %.0f MiB in all; stream-ordered allocation (MEMORY_POOLS_SUPPORTED): %d\n",
                double(total) / double(kMiB), pools);
    if (!pools) {
      std::printf("left out: graph memory nodes need the stream-ordered allocator, which this device lacks\n");
      CU_CHECK(cuCtxSetCurrent(nullptr));
      CU_CHECK(cuDevicePrimaryCtxRelease(dev));
      return wb::kExitOk;
    }
    CUlibrary vec = nullptr;
    CU_CHECK(cuLibraryLoadFromFile(&vec, vectorImage.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0));
    const Kernels k{functionOf(vec, "fill"), functionOf(vec, "scale")};  // loaded here, before any capture
    std::vector<Way> ways;

    wb::step(1, "A capture that allocates: memory nodes");
    memoryNodes(k);
    wb::step(2, "The graph memory pool across launches, and trimming it");
    graphPool(k, dev);
    wb::step(3, "A plain cuMemAlloc in a capture, by capture mode");
    plainAllocations(k);
    wb::step(4, "Lazy loading and the first launch in a capture");
    if (wb::underSanitizer())
      std::printf("left out under compute-sanitizer, which ran no kernel beside one that waits\n");
    else
      lazyLoading();
    wb::step(5, "Capturing into a graph you hold; changing a node in place");
#if CUDA_VERSION >= 12030
    captureIntoGraph(k);
#else
    std::printf("left out: built with CUDA %d.%d; cuStreamBeginCaptureToGraph came with 12.3\n", CUDA_VERSION / 1000,
                CUDA_VERSION % 1000 / 10);
#endif
    wb::step(6, "One step's memory over launches: memory nodes against a pool outside");
    ways.push_back(stepOverLaunches(k, dev, true));
    ways.push_back(stepOverLaunches(k, dev, false));
    std::printf("%-34s", "MiB above the start, launch");
    for (int i = 1; i <= 12; ++i) std::printf(" %5d", i);
    std::printf("\n");
    for (const Way& w : ways) {
      std::printf("%-34s", w.name);
      for (double v : w.usedMiB) std::printf(" %5.0f", v);
      std::printf("\n");
    }
    std::printf("the device's total: %.0f MiB\n", double(total) / double(kMiB));

    CU_CHECK(cuLibraryUnload(vec));
    CU_CHECK(cuCtxSetCurrent(nullptr));
    CU_CHECK(cuDevicePrimaryCtxRelease(dev));
    return figureOf(ways, total).save(paths.csv, 6);
  } catch (...) {
    return wb::reportFatal(std::current_exception());
  }
}
