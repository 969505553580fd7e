// Lesson 15: CUDA graphs: capture once, launch many.
//
// What you learn: stream capture records the work put into a stream as a graph instead of running
// it; cuGraphInstantiate makes it an executable graph, which each cuGraphLaunch runs whole. What a
// capture forbids (a synchronising call invalidates it until cuStreamEndCapture, which returns an
// error and no graph), the legacy stream and the three capture modes. How an engine changes a graph
// between tokens: new arguments for the next launch (cuGraphExecKernelNodeSetParams), or a fresh
// capture applied with cuGraphExecUpdate, which refuses a changed topology. What one graph launch
// saves against N stream launches; a graph built by hand; a loop on the GPU (a conditional WHILE
// node, CUDA 12.4 and newer). Pending work comes from the gate kernel of lesson 09.
//
// APIs: cuStreamBeginCapture, cuStreamEndCapture, cuStreamIsCapturing, cuStreamGetCaptureInfo,
//       cuThreadExchangeStreamCaptureMode, cuGraphInstantiate, cuGraphLaunch, cuGraphExecDestroy,
//       cuGraphDestroy, cuGraphGetNodes, cuGraphNodeGetType, cuGraphKernelNodeGetParams,
//       cuGraphExecKernelNodeSetParams, cuGraphExecUpdate, cuGraphCreate, cuGraphAddKernelNode,
//       cuGraphAddHostNode, cuGraphConditionalHandleCreate, cuGraphAddNode, cuKernelGetFunction
// Run:  ctest -R lesson15   (or build/lessons/lesson15-graphs [--csv lesson15-figure.csv])
#include "figure.hpp"
#include "gate.hpp"
#include "workbook.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <vector>

// The kernels as CUfunctions of the current context (cuKernelGetFunction): what a kernel node takes.
struct Kernels {
  CUfunction gate = nullptr, stamp = nullptr;  // kernels/streams.cu (lesson 09)
  CUfunction tick = nullptr, axpb = nullptr;   // kernels/graphs.cu
  CUfunction loopBody = nullptr;               // kernels/graphs.cu, CUDA 12.4 and newer
};

CUfunction functionOf(CUlibrary library, const char* name) {
  CUkernel kernel = nullptr;
  CU_CHECK(cuLibraryGetKernel(&kernel, library, name));
  CUfunction f = nullptr;
  CU_CHECK(cuKernelGetFunction(&f, kernel));
  return f;
}

CUstream newStream(unsigned flags = CU_STREAM_NON_BLOCKING) {
  CUstream s = nullptr;
  CU_CHECK(cuStreamCreate(&s, flags));
  return s;
}

const char* statusName(CUstreamCaptureStatus status) {
  static const char* const names[] = {"NONE", "ACTIVE", "INVALIDATED"};  // the enum's values 0, 1 and 2
  return static_cast<size_t>(status) < std::size(names) ? names[status] : "an unknown status";
}

CUstreamCaptureStatus captureStatus(CUstream s) {
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  CU_CHECK(cuStreamIsCapturing(s, &status));
  return status;
}

// The enumerator's name, indexed by its value (0 to 8).
const char* updateResultName(CUgraphExecUpdateResult result) {
  static const char* const names[] = {
      "CU_GRAPH_EXEC_UPDATE_SUCCESS", "CU_GRAPH_EXEC_UPDATE_ERROR", "CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED",
      "CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED", "CU_GRAPH_EXEC_UPDATE_ERROR_FUNCTION_CHANGED",
      "CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED", "CU_GRAPH_EXEC_UPDATE_ERROR_NOT_SUPPORTED",
      "CU_GRAPH_EXEC_UPDATE_ERROR_UNSUPPORTED_FUNCTION_CHANGE", "CU_GRAPH_EXEC_UPDATE_ERROR_ATTRIBUTES_CHANGED"};
  const size_t i = static_cast<size_t>(result);
  return i < std::size(names) ? names[i] : "an unknown result";
}

// One stamp (lesson 09), unchecked: some steps launch it into a stream whose capture is invalid.
CUresult stampIn(const Kernels& k, wb::PinnedWords& stamps, size_t slot, CUstream s) {
  CUdeviceptr counter = stamps.device(0), where = stamps.device(slot);
  void* args[] = {&counter, &where};
  return cuLaunchKernel(k.stamp, 1, 1, 1, 1, 1, 1, 0, s, args, nullptr);
}

constexpr unsigned kBlocks = 4, kThreads = 256;

// data[i] = a * data[i] + b for the n floats at data, in stream s.
void launchAxpb(const Kernels& k, CUdeviceptr data, unsigned n, float a, float b, CUstream s) {
  void* args[] = {&data, &n, &a, &b};
  CU_CHECK(cuLaunchKernel(k.axpb, kBlocks, 1, 1, kThreads, 1, 1, 0, s, args, nullptr));
}

// Every kernel is loaded before any gate closes (lesson 09: under lazy loading a first launch may
// wait for running kernels): wb::StreamKernels::load launches gate and stamp, tick and axpb are
// launched here, and loop_body, which needs a graph to run in, is loaded with cuFuncLoad.
Kernels loadKernels(CUlibrary streams, CUlibrary graphs) {
  wb::StreamKernels::load(streams);
  Kernels k{functionOf(streams, "gate"), functionOf(streams, "stamp"), functionOf(graphs, "tick"),
            functionOf(graphs, "axpb")};
  CUdeviceptr word = 0;
  CU_CHECK(cuMemAlloc(&word, sizeof(float)));
  void* tickArgs[] = {&word};
  CU_CHECK(cuLaunchKernel(k.tick, 1, 1, 1, 1, 1, 1, 0, nullptr, tickArgs, nullptr));
  launchAxpb(k, word, 0, 1.0f, 1.0f, nullptr);  // over 0 floats: touches nothing
  CU_CHECK(cuCtxSynchronize());
  CU_CHECK(cuMemFree(word));
#if CUDA_VERSION >= 12040
  k.loopBody = functionOf(graphs, "loop_body");
  CU_CHECK(cuFuncLoad(k.loopBody));
#endif
  return k;
}

float firstFloat(CUdeviceptr p) {
  float v = 0;
  CU_CHECK(cuMemcpyDtoH(&v, p, sizeof v));
  return v;
}

// Argument i of a kernel node's parameters, as a T.
template <class T>
T argument(const CUDA_KERNEL_NODE_PARAMS& p, size_t i) {
  if (!p.kernelParams) throw std::runtime_error("the kernel node's parameters came back without kernelParams");
  return *static_cast<const T*>(p.kernelParams[i]);
}

void runGraph(CUgraphExec exec, CUstream s) {
  CU_CHECK(cuGraphLaunch(exec, s));
  CU_CHECK(cuStreamSynchronize(s));
}

size_t kernelNodesIn(CUgraph graph) {
  size_t count = 0, kernels = 0;
  CU_CHECK(cuGraphGetNodes(graph, nullptr, &count));
  std::vector<CUgraphNode> nodes(count);
  CU_CHECK(cuGraphGetNodes(graph, nodes.data(), &count));
  for (CUgraphNode node : nodes) {
    CUgraphNodeType type = CU_GRAPH_NODE_TYPE_EMPTY;
    CU_CHECK(cuGraphNodeGetType(node, &type));
    kernels += type == CU_GRAPH_NODE_TYPE_KERNEL;
  }
  return kernels;
}

//! [capture]
// Two stamps captured into a graph: recorded, not run, so their slots still read 0 once the
// capture has ended and the stream is synchronised.
void captureAndLaunch(const Kernels& k) {
  wb::PinnedWords stamps(3);  // [0] the stamp counter, [1] and [2] the slots
  CUstream s = newStream();
  CU_CHECK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
  CUstreamCaptureStatus during = CU_STREAM_CAPTURE_STATUS_NONE;
  cuuint64_t id = 0;
  CU_CHECK(wb::streamCaptureInfo(s, &during, &id));  // common/compat.hpp: CUDA 12 and 13 differ here
  CU_CHECK(stampIn(k, stamps, 1, s));
  CU_CHECK(stampIn(k, stamps, 2, s));
  CUgraph graph = nullptr;
  CU_CHECK(cuStreamEndCapture(s, &graph));
  CU_CHECK(cuStreamSynchronize(s));
  const CUstreamCaptureStatus after = captureStatus(s);
  const size_t kernels = kernelNodesIn(graph);
  std::printf("during the capture: %s (capture id %llu); after cuStreamEndCapture: %s\n", statusName(during),
              static_cast<unsigned long long>(id), statusName(after));
  std::printf("the graph holds %zu kernel nodes; stream synchronised, the stamps' slots read %u and %u\n",
              kernels, stamps.read(1), stamps.read(2));
  wb::expect(during == CU_STREAM_CAPTURE_STATUS_ACTIVE && after == CU_STREAM_CAPTURE_STATUS_NONE &&
                 kernels == 2 && stamps.read(1) == 0 && stamps.read(2) == 0,
             "the capture recording two kernels and running neither",
             "another status, node count or a stamp");
  //! [capture]
  //! [launch]
  CUgraphExec exec = nullptr;
  CU_CHECK(cuGraphInstantiate(&exec, graph, 0));
  for (int launch = 1; launch <= 2; ++launch) {
    runGraph(exec, s);
    std::printf("cuGraphLaunch %d, stream synchronised: the stamps ran %u and %u\n", launch, stamps.read(1),
                stamps.read(2));
  }
  wb::expect(stamps.read(1) == 3 && stamps.read(2) == 4, "each launch running both kernels in capture order",
             "the stamps read " + std::to_string(stamps.read(1)) + " and " + std::to_string(stamps.read(2)));
  CU_CHECK(cuGraphExecDestroy(exec));
  CU_CHECK(cuGraphDestroy(graph));
  CU_CHECK(cuStreamDestroy(s));
}
//! [launch]

//! [invalidate]
// cuCtxSynchronize during a GLOBAL capture, which the programming guide calls invalid. Which code
// each call returns, the functions' pages do not list: the output shows what this driver returned.
void synchronizeDuringCapture(const Kernels& k) {
  wb::PinnedWords stamps(2);
  CUstream s = newStream();
  CU_CHECK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
  CU_CHECK(stampIn(k, stamps, 1, s));
  const CUresult sync = cuCtxSynchronize();
  const CUstreamCaptureStatus isCapturing = captureStatus(s);
  CUstreamCaptureStatus info = CU_STREAM_CAPTURE_STATUS_NONE;
  const CUresult infoRc = wb::streamCaptureInfo(s, &info);
  const CUresult later = stampIn(k, stamps, 1, s);
  CUgraph graph = nullptr;
  const CUresult ended = cuStreamEndCapture(s, &graph);
  const CUstreamCaptureStatus afterEnd = captureStatus(s);
  std::printf("GLOBAL capture, then cuCtxSynchronize: %s\n", wb::errorName(sync).c_str());
  std::printf("  cuStreamIsCapturing: %s; cuStreamGetCaptureInfo: %s, %s\n", statusName(isCapturing),
              wb::errorName(infoRc).c_str(), statusName(info));
  std::printf("  a launch into the stream: %s; cuStreamEndCapture: %s, graph %s; then the stream is %s\n",
              wb::errorName(later).c_str(), wb::errorName(ended).c_str(), graph ? "NOT NULL" : "NULL",
              statusName(afterEnd));
  if (graph) CU_CHECK(cuGraphDestroy(graph));
  //! [invalidate]
  wb::expect(sync != CUDA_SUCCESS && isCapturing == CU_STREAM_CAPTURE_STATUS_INVALIDATED &&
                 infoRc == CUDA_SUCCESS && info == CU_STREAM_CAPTURE_STATUS_INVALIDATED,
             "the synchronising call failing and invalidating the capture",
             wb::errorName(sync) + ", " + statusName(isCapturing));
  wb::expect(later != CUDA_SUCCESS && ended != CUDA_SUCCESS && !graph && afterEnd == CU_STREAM_CAPTURE_STATUS_NONE,
             "every later use failing until cuStreamEndCapture, which returns an error and no graph",
             "the launch gave " + wb::errorName(later) + ", cuStreamEndCapture " + wb::errorName(ended));
  CU_CHECK(stampIn(k, stamps, 1, s));  // the capture has ended: the stream runs work again
  const CUresult synced = cuStreamSynchronize(s);
  std::printf("  a stamp launched now, the stream synchronised: %s, the stamp ran %s\n",
              wb::errorName(synced).c_str(), stamps.read(1) == 1 ? "yes" : "NO");
  wb::expect(synced == CUDA_SUCCESS && stamps.read(1) == 1, "the stream usable again", "the stamp did not run");
  CU_CHECK(cuStreamDestroy(s));
}

//! [during-capture]
// call(s) during a capture of one stamp, begun in mode in a new stream s (flags: blocking or not):
// what it returned, the capture's status after it, and what cuStreamEndCapture returned.
struct DuringCapture {
  CUresult call, ended;
  CUstreamCaptureStatus after;
  bool graph;
};
template <class Call>
DuringCapture duringCapture(const Kernels& k, CUstreamCaptureMode mode, unsigned flags, Call&& call) {
  wb::PinnedWords stamps(2);
  CUstream s = newStream(flags);
  CU_CHECK(cuStreamBeginCapture(s, mode));
  CU_CHECK(stampIn(k, stamps, 1, s));
  DuringCapture d{};
  d.call = call(s);
  d.after = captureStatus(s);
  CUgraph graph = nullptr;
  d.ended = cuStreamEndCapture(s, &graph);
  d.graph = graph != nullptr;
  if (graph) CU_CHECK(cuGraphDestroy(graph));
  CU_CHECK(cuStreamDestroy(s));
  return d;
}
//! [during-capture]

//! [invalidate-modes]
// Synchronising the capturing stream itself, under a capture begun in each of the two other modes.
void synchronizeInOtherModes(const Kernels& k) {
  for (CUstreamCaptureMode mode : {CU_STREAM_CAPTURE_MODE_THREAD_LOCAL, CU_STREAM_CAPTURE_MODE_RELAXED}) {
    const char* name = mode == CU_STREAM_CAPTURE_MODE_RELAXED ? "RELAXED" : "THREAD_LOCAL";
    const DuringCapture d =
        duringCapture(k, mode, CU_STREAM_NON_BLOCKING, [](CUstream s) { return cuStreamSynchronize(s); });
    std::printf("%s capture, then cuStreamSynchronize of its stream: %s; the capture then %s; "
                "cuStreamEndCapture %s\n",
                name, wb::errorName(d.call).c_str(), statusName(d.after), wb::errorName(d.ended).c_str());
    wb::expect(d.call != CUDA_SUCCESS && d.after == CU_STREAM_CAPTURE_STATUS_INVALIDATED &&
                   d.ended != CUDA_SUCCESS && !d.graph,
               std::string("the synchronising call invalidating a ") + name + " capture too",
               wb::errorName(d.call) + ", the capture " + statusName(d.after));
  }
}
//! [invalidate-modes]

//! [legacy]
// A capture in a blocking stream (created without CU_STREAM_NON_BLOCKING), and the legacy stream
// asked whether it captures.
void legacyDuringCapture(const Kernels& k) {
  const DuringCapture d = duringCapture(k, CU_STREAM_CAPTURE_MODE_GLOBAL, CU_STREAM_DEFAULT, [](CUstream) {
    CUstreamCaptureStatus legacy = CU_STREAM_CAPTURE_STATUS_NONE;
    return cuStreamIsCapturing(CU_STREAM_LEGACY, &legacy);
  });
  std::printf("a blocking stream capturing: cuStreamIsCapturing(CU_STREAM_LEGACY) %s; "
              "the capture stays %s; cuStreamEndCapture %s\n",
              wb::errorName(d.call).c_str(), statusName(d.after), wb::errorName(d.ended).c_str());
  wb::expect(d.call == CUDA_ERROR_STREAM_CAPTURE_IMPLICIT && d.after == CU_STREAM_CAPTURE_STATUS_ACTIVE &&
                 d.ended == CUDA_SUCCESS && d.graph,
             "the legacy stream refused with CUDA_ERROR_STREAM_CAPTURE_IMPLICIT, the capture intact",
             wb::errorName(d.call) + ", the capture " + statusName(d.after));
}
//! [legacy]

//! [modes]
// cuMemAlloc while this thread captures, under a capture begun in each mode, and once more with the
// thread switched to RELAXED around the call (cuThreadExchangeStreamCaptureMode, push and pop). The
// memory is freed only after the capture: cuMemFree may synchronise.
void captureModes(const Kernels& k) {
  // documented: the reference promises that the allocation is allowed.
  struct Case { const char* name; CUstreamCaptureMode mode; bool relaxThread, documented; };
  const Case cases[] = {{"GLOBAL", CU_STREAM_CAPTURE_MODE_GLOBAL, false, false},
                        {"THREAD_LOCAL", CU_STREAM_CAPTURE_MODE_THREAD_LOCAL, false, false},
                        {"RELAXED", CU_STREAM_CAPTURE_MODE_RELAXED, false, true},
                        {"GLOBAL, thread switched to RELAXED", CU_STREAM_CAPTURE_MODE_GLOBAL, true, true}};
  for (const Case& c : cases) {
    CUdeviceptr p = 0;
    const DuringCapture d = duringCapture(k, c.mode, CU_STREAM_NON_BLOCKING, [&](CUstream) {
      CUstreamCaptureMode thread = CU_STREAM_CAPTURE_MODE_RELAXED;
      if (c.relaxThread) CU_CHECK(cuThreadExchangeStreamCaptureMode(&thread));  // now holds the old mode
      const CUresult alloc = cuMemAlloc(&p, 4096);
      if (c.relaxThread) CU_CHECK(cuThreadExchangeStreamCaptureMode(&thread));  // the old mode back
      return alloc;
    });
    if (d.call == CUDA_SUCCESS) CU_CHECK(cuMemFree(p));
    std::printf("  %-36s cuMemAlloc %s; the capture then %s; cuStreamEndCapture %s\n", c.name,
                wb::errorName(d.call).c_str(), statusName(d.after), wb::errorName(d.ended).c_str());
    if (c.documented)
      wb::expect(d.call == CUDA_SUCCESS && d.after == CU_STREAM_CAPTURE_STATUS_ACTIVE &&
                     d.ended == CUDA_SUCCESS,
                 std::string("cuMemAlloc allowed and the capture intact under ") + c.name,
                 wb::errorName(d.call) + ", the capture " + statusName(d.after));
  }
}
//! [modes]

// One step of an engine, captured afresh as an engine does per token: x = a * x + b, and with extra,
// then x += 1000 (a second kernel: another topology).
CUgraph captureStep(const Kernels& k, CUstream s, CUdeviceptr data, unsigned n, float a, float b, bool extra) {
  CU_CHECK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
  launchAxpb(k, data, n, a, b, s);
  if (extra) launchAxpb(k, data, n, 1.0f, 1000.0f, s);
  CUgraph graph = nullptr;
  CU_CHECK(cuStreamEndCapture(s, &graph));
  return graph;
}

//! [set-params]
// x += b, captured with b = 1 and instantiated. Behind a closed gate: a launch, then
// cuGraphExecKernelNodeSetParams to b = 100 while that launch is still pending, then a second launch.
void newArgumentsNextLaunch(const Kernels& k) {
  constexpr unsigned n = 1024;
  CUstream s = newStream();
  CUdeviceptr data = 0;
  CU_CHECK(cuMemAlloc(&data, n * sizeof(float)));
  CU_CHECK(cuMemsetD32Async(data, 0, n, s));
  CUgraph graph = captureStep(k, s, data, n, 1.0f, 1.0f, false);
  CUgraphNode node = nullptr;
  size_t one = 1;
  CU_CHECK(cuGraphGetNodes(graph, &node, &one));
  CUgraphExec exec = nullptr;
  CU_CHECK(cuGraphInstantiate(&exec, graph, 0));
  const CUgraphExec before = exec;
  CUDA_KERNEL_NODE_PARAMS params{};
  CU_CHECK(cuGraphKernelNodeGetParams(node, &params));  // the captured launch: function, shape, arguments
  unsigned count = n;
  float a = 1.0f, b = 100.0f;
  void* args[] = {&data, &count, &a, &b};
  params.kernelParams = args;  // copied by the call, with the values they point to
  params.extra = nullptr;
  //! [set-params]
  //! [set-params-2]
  bool pending = false;
  {
    wb::Gate gate(k.gate, s);
    CU_CHECK(cuGraphLaunch(exec, s));                               // b = 1, held by the gate
    CU_CHECK(cuGraphExecKernelNodeSetParams(exec, node, &params));  // b = 100 from the next launch on
    pending = gate.outcome() == wb::Gate::Waiting;
    CU_CHECK(cuGraphLaunch(exec, s));
    gate.open();
    CU_CHECK(cuStreamSynchronize(s));
  }
  const float x = firstFloat(data);
  CUDA_KERNEL_NODE_PARAMS own{};
  CU_CHECK(cuGraphKernelNodeGetParams(node, &own));
  const float nodeB = argument<float>(own, 3);
  std::printf("launch 1 (b = 1), then cuGraphExecKernelNodeSetParams(b = 100) with launch 1 %s, "
              "then launch 2\n", pending ? "still pending behind the gate" : "NO LONGER PENDING");
  std::printf("gate opened: data[0] = %g (0 + 1 + 100: the pending launch kept b = 1)\n", x);
  std::printf("the graph's own node still says b = %g; the executable graph is the same handle: %s\n", nodeB,
              exec == before ? "yes" : "NO");
  wb::expect(pending && x == 101.0f && nodeB == 1.0f,
             "the update changing later launches only, not the pending one nor the graph's node",
             "data[0] = " + std::to_string(x) + ", the node's b = " + std::to_string(nodeB));
  runGraph(exec, s);
  std::printf("launch 3: data[0] = %g\n", firstFloat(data));
  wb::expect(firstFloat(data) == 201.0f, "the new argument kept for every later launch", "another value");
  CU_CHECK(cuGraphExecDestroy(exec));
  CU_CHECK(cuGraphDestroy(graph));
  CU_CHECK(cuMemFree(data));
  CU_CHECK(cuStreamDestroy(s));
}
//! [set-params-2]

//! [exec-update]
// An executable graph instantiated from the first capture, then updated from a second capture of the
// same step with another b, then from a capture with one kernel more.
void updateFromNewCapture(const Kernels& k) {
  constexpr unsigned n = 1024;
  CUstream s = newStream();
  CUdeviceptr data = 0;
  CU_CHECK(cuMemAlloc(&data, n * sizeof(float)));
  CUgraph first = captureStep(k, s, data, n, 0.0f, 1.0f, false);
  CUgraphExec exec = nullptr;
  CU_CHECK(cuGraphInstantiate(&exec, first, 0));
  runGraph(exec, s);
  std::printf("instantiated from the first capture (b = 1): data[0] = %g\n", firstFloat(data));
  CUgraph same = captureStep(k, s, data, n, 0.0f, 2.0f, false);
  CUgraphExecUpdateResultInfo sameInfo{};
  const CUresult sameRc = cuGraphExecUpdate(exec, same, &sameInfo);
  runGraph(exec, s);
  const float updated = firstFloat(data);
  std::printf("cuGraphExecUpdate from a capture with b = 2: %s, %s; launched: data[0] = %g\n",
              wb::errorName(sameRc).c_str(), updateResultName(sameInfo.result), updated);
  wb::expect(sameRc == CUDA_SUCCESS && sameInfo.result == CU_GRAPH_EXEC_UPDATE_SUCCESS && updated == 2.0f,
             "the same topology updated in place",
             wb::errorName(sameRc) + ", data[0] = " + std::to_string(updated));
  //! [exec-update]
  CUgraph bigger = captureStep(k, s, data, n, 0.0f, 3.0f, true);
  CUgraphExecUpdateResultInfo info{};
  const CUresult rc = cuGraphExecUpdate(exec, bigger, &info);
  std::printf("cuGraphExecUpdate from a capture with one kernel more: %s, %s, error node %s\n",
              wb::errorName(rc).c_str(), updateResultName(info.result), info.errorNode ? "set" : "NULL");
  wb::expect(rc == CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE &&
                 info.result == CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED && info.errorNode == nullptr,
             "the update refused: the node count changed",
             wb::errorName(rc) + ", " + updateResultName(info.result));
  CU_CHECK(cuGraphExecDestroy(exec));  // refused: instantiate the new graph instead
  CU_CHECK(cuGraphInstantiate(&exec, bigger, 0));
  runGraph(exec, s);
  const float again = firstFloat(data);
  std::printf("instantiated anew from that capture: data[0] = %g (3 + 1000)\n", again);
  wb::expect(again == 1003.0f, "the new executable graph running both kernels", "data[0] = " + std::to_string(again));
  CU_CHECK(cuGraphExecDestroy(exec));
  for (CUgraph g : {first, same, bigger}) CU_CHECK(cuGraphDestroy(g));
  CU_CHECK(cuMemFree(data));
  CU_CHECK(cuStreamDestroy(s));
}

struct LaunchCost {
  unsigned kernels;
  double streamSubmitUs, graphSubmitUs, streamDoneUs, graphDoneUs;  // per kernel
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

//! [cost]
// N ticks launched one by one into a stream, against one launch of a graph holding the same N ticks:
// the host's time to submit them, and until the stream is done. The counter proves that every tick ran.
LaunchCost launchCost(const Kernels& k, CUstream s, CUdeviceptr counter, unsigned n) {
  constexpr int kWarmup = 2, kRepeats = 7;
  void* args[] = {&counter};
  const auto submitTicks = [&] {
    for (unsigned i = 0; i < n; ++i) CU_CHECK(cuLaunchKernel(k.tick, 1, 1, 1, 1, 1, 1, 0, s, args, nullptr));
  };
  CU_CHECK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
  submitTicks();
  CUgraph graph = nullptr;
  CU_CHECK(cuStreamEndCapture(s, &graph));
  CUgraphExec exec = nullptr;
  CU_CHECK(cuGraphInstantiate(&exec, graph, 0));
  CU_CHECK(cuMemsetD32Async(counter, 0, 1, s));
  CU_CHECK(cuStreamSynchronize(s));
  //! [cost]
  // One way, timed until its last launch call returned and until the stream is done.
  std::vector<double> streamSubmit, graphSubmit, streamDone, graphDone;
  const auto timed = [&](auto&& submit, std::vector<double>& submitted, std::vector<double>& done, bool keep) {
    const wb::Stopwatch t;
    submit();
    const double launched = t.ms();
    CU_CHECK(cuStreamSynchronize(s));
    const double finished = t.ms();
    if (keep) submitted.push_back(launched), done.push_back(finished);
  };
  for (int rep = 0; rep < kWarmup + kRepeats; ++rep) {
    timed(submitTicks, streamSubmit, streamDone, rep >= kWarmup);
    timed([&] { CU_CHECK(cuGraphLaunch(exec, s)); }, graphSubmit, graphDone, rep >= kWarmup);
  }
  unsigned ran = 0;
  CU_CHECK(cuMemcpyDtoH(&ran, counter, sizeof ran));
  wb::expect(ran == 2u * (kWarmup + kRepeats) * n, "every tick run, both ways",
             std::to_string(ran) + " ticks ran of " + std::to_string(2u * (kWarmup + kRepeats) * n));
  CU_CHECK(cuGraphExecDestroy(exec));
  CU_CHECK(cuGraphDestroy(graph));
  const double perKernelUs = 1000.0 / n;
  return {n, median(streamSubmit) * perKernelUs, median(graphSubmit) * perKernelUs,
          median(streamDone) * perKernelUs, median(graphDone) * perKernelUs};
}

// Step 5 for N from 1 to 1024: the table, the verdict at the largest N, and the figure's rows.
void launchCosts(const Kernels& k, wb::FigureTable& figure) {
  CUstream s = newStream();
  CUdeviceptr counter = 0;
  CU_CHECK(cuMemAlloc(&counter, sizeof(unsigned)));
  std::vector<LaunchCost> costs;
  for (unsigned n = 1; n <= 1024; n *= 4) costs.push_back(launchCost(k, s, counter, n));
  CU_CHECK(cuMemFree(counter));
  CU_CHECK(cuStreamDestroy(s));
  std::printf("Host time per kernel, microseconds (median of 7 after 2 warm-ups):\n");
  std::printf("  %7s  %14s  %13s  %12s  %11s\n", "kernels", "stream: submit", "graph: submit", "stream: done",
              "graph: done");
  for (const LaunchCost& c : costs) {
    std::printf("  %7u  %14.3f  %13.3f  %12.3f  %11.3f\n", c.kernels, c.streamSubmitUs, c.graphSubmitUs,
                c.streamDoneUs, c.graphDoneUs);
    figure.row("%u,stream: until done,%.3f", c.kernels, c.streamDoneUs);
    figure.row("%u,graph: until done,%.3f", c.kernels, c.graphDoneUs);
    figure.row("%u,stream: submit only,%.3f", c.kernels, c.streamSubmitUs);
    figure.row("%u,graph: submit only,%.3f", c.kernels, c.graphSubmitUs);
  }
  const LaunchCost& most = costs.back();
  std::printf("at %u kernels, one graph launch: %.1fx cheaper to submit, done %.1fx sooner\n", most.kernels,
              most.streamSubmitUs / most.graphSubmitUs, most.streamDoneUs / most.graphDoneUs);
  wb::expect(most.graphSubmitUs < most.streamSubmitUs && most.graphDoneUs < most.streamDoneUs,
             "one graph launch cheaper per kernel than " + std::to_string(most.kernels) + " stream launches",
             "the graph was not cheaper there");
}

//! [add-kernel]
// A kernel node of one thread running f with args, after the nodes in after (none: a root).
CUgraphNode addKernel(CUgraph graph, CUfunction f, void** args, std::initializer_list<CUgraphNode> after) {
  CUDA_KERNEL_NODE_PARAMS p{};
  p.func = f;
  p.gridDimX = p.gridDimY = p.gridDimZ = 1;
  p.blockDimX = p.blockDimY = p.blockDimZ = 1;
  p.kernelParams = args;  // copied by the call, with the values they point to
  const std::vector<CUgraphNode> dependencies(after);
  CUgraphNode node = nullptr;
  CU_CHECK(cuGraphAddKernelNode(&node, graph, dependencies.data(), dependencies.size(), &p));
  return node;
}

// A host node's function, run on a thread the reference does not name: it must not call CUDA.
void CUDA_CB markDone(void* flag) { static_cast<std::atomic<bool>*>(flag)->store(true); }
//! [add-kernel]

//! [by-hand]
// A: the gate; B: a stamp; C: a stamp after both A and B; D: a host node after C.
void byHand(const Kernels& k) {
  wb::PinnedWords words(5);  // [0] the gate, [1] its outcome, [2] the stamp counter, [3] B's slot, [4] C's
  CUdeviceptr gateWord = words.device(0), outcome = words.device(1), counter = words.device(2),
              slotB = words.device(3), slotC = words.device(4);
  unsigned long long deadlineNs = 10'000'000'000ull;  // the gate gives up after 10 s
  void* gateArgs[] = {&gateWord, &deadlineNs, &outcome};
  void* stampB[] = {&counter, &slotB};
  void* stampC[] = {&counter, &slotC};
  std::atomic<bool> hostRan{false};
  CUgraph graph = nullptr;
  CU_CHECK(cuGraphCreate(&graph, 0));
  const CUgraphNode a = addKernel(graph, k.gate, gateArgs, {});
  const CUgraphNode b = addKernel(graph, k.stamp, stampB, {});
  const CUgraphNode c = addKernel(graph, k.stamp, stampC, {a, b});
  const CUDA_HOST_NODE_PARAMS host{markDone, &hostRan};
  CUgraphNode d = nullptr;
  CU_CHECK(cuGraphAddHostNode(&d, graph, &c, 1, &host));
  CUgraphExec exec = nullptr;
  CU_CHECK(cuGraphInstantiate(&exec, graph, 0));
  //! [by-hand]
  CUstream s = newStream();
  CU_CHECK(cuGraphLaunch(exec, s));
  // B's stamp first, read from pinned memory (no CUDA call), for at most 2 s: only once B is done
  // does a C still at 0 show that C waits for A.
  const wb::Stopwatch clock;
  while (words.read(3) == 0 && clock.ms() < 2000) {}
  const bool bRan = words.read(3) != 0;
  const unsigned cClosed = words.read(4);
  const bool hostClosed = hostRan.load(),
             gateClosed = words.read(1) == static_cast<unsigned>(wb::Gate::Waiting);
  words.write(0, 1);  // open the gate
  CU_CHECK(cuStreamSynchronize(s));
  std::printf("gate closed: B, independent of A, %s; then C (after A and B) ran: %s; "
              "D, the host node after C, ran: %s\n",
              bRan ? "ran" : "did not run within 2 s (the scheduler did not run the branches side by side)",
              cClosed ? "YES" : "no", hostClosed ? "YES" : "no");
  std::printf("gate opened, stream synchronised: B ran %u, C ran %u, the host node ran: %s\n", words.read(3),
              words.read(4), hostRan.load() ? "yes" : "NO");
  wb::expect(gateClosed && cClosed == 0 && !hostClosed, "C and the host node waiting for the gate",
             gateClosed ? "one of them ran before" : "the gate had ended");
  wb::expect(words.read(1) == static_cast<unsigned>(wb::Gate::Released) &&
                 words.read(4) > words.read(3) && hostRan.load(),
             "C after both of its dependencies, and the host node after C", "another order");
  CUDA_KERNEL_NODE_PARAMS got{};
  CU_CHECK(cuGraphKernelNodeGetParams(c, &got));
  const CUdeviceptr gotSlot = argument<CUdeviceptr>(got, 1);
  std::printf("cuGraphKernelNodeGetParams(C): the stamp function %s, %u block of %u thread, "
              "its slot argument %s\n", got.func == k.stamp ? "as given" : "ANOTHER", got.gridDimX,
              got.blockDimX, gotSlot == slotC ? "as given" : "ANOTHER");
  wb::expect(got.func == k.stamp && got.gridDimX == 1 && gotSlot == slotC, "the node's parameters as given",
             "other parameters");
  CU_CHECK(cuGraphExecDestroy(exec));
  CU_CHECK(cuGraphDestroy(graph));
  CU_CHECK(cuStreamDestroy(s));
}

#if CUDA_VERSION >= 12040
//! [conditional]
// A graph of one WHILE node whose body, loop_body, counts its runs and sets the condition to whether
// the count is still below the limit; the condition starts at 1 at every launch (ASSIGN_DEFAULT).
void loopOnTheGpu(const Kernels& k, CUcontext ctx) {
  CUstream s = newStream();
  CUdeviceptr words = 0;  // [0] the count, [1] the limit
  CU_CHECK(cuMemAlloc(&words, 2 * sizeof(unsigned)));
  CUdeviceptr count = words, limit = words + sizeof(unsigned);
  CUgraph graph = nullptr;
  CU_CHECK(cuGraphCreate(&graph, 0));
  CUgraphConditionalHandle condition = 0;
  CU_CHECK(cuGraphConditionalHandleCreate(&condition, graph, ctx, 1, CU_GRAPH_COND_ASSIGN_DEFAULT));
  CUgraphNodeParams loop{};  // zeroed: the reference requires every unused byte to be 0
  loop.type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
  loop.conditional.handle = condition;
  loop.conditional.type = CU_GRAPH_COND_TYPE_WHILE;
  loop.conditional.size = 1;
  loop.conditional.ctx = ctx;
  CUgraphNode node = nullptr;
  CU_CHECK(wb::graphAddNode(&node, graph, nullptr, 0, &loop));  // common/compat.hpp: 12 and 13 differ
  const CUgraph body = loop.conditional.phGraph_out[0];         // created with the node, owned by it
  void* args[] = {&count, &limit, &condition};
  addKernel(body, k.loopBody, args, {});
  CUgraphExec exec = nullptr;
  CU_CHECK(cuGraphInstantiate(&exec, graph, 0));
  //! [conditional]
  bool right = true;
  for (unsigned want : {5u, 12u}) {
    CU_CHECK(cuMemsetD32Async(count, 0, 1, s));
    CU_CHECK(cuMemcpyHtoDAsync(limit, &want, sizeof want, s));
    runGraph(exec, s);
    unsigned ran = 0;
    CU_CHECK(cuMemcpyDtoH(&ran, count, sizeof ran));
    std::printf("limit %2u in device memory, one cuGraphLaunch: the body ran %u times\n", want, ran);
    right = right && ran == want;
  }
  wb::expect(right, "the WHILE node running its body until the body cleared the condition", "another count");
  CU_CHECK(cuGraphExecDestroy(exec));
  CU_CHECK(cuGraphDestroy(graph));
  CU_CHECK(cuMemFree(words));
  CU_CHECK(cuStreamDestroy(s));
}
#endif

int main(int argc, char** argv) {
  wb::FigurePaths paths;
  if (!wb::parseFigureArgs(argc, argv, paths, "lesson15-figure.csv")) return wb::kExitUsage;
  try {
    wb::checkEnvironment({
        {"CUDA_LAUNCH_BLOCKING", wb::Under::Stops,
         "every launch would wait for its kernel: a graph launched behind the gate kernel would wait for the gate, "
         "and nothing is ever pending"},
    });
    // The images are checked before the driver starts: a damaged one stops the program in a moment.
    const std::string streamsImage = wb::verifiedImagePath("streams.fatbin");
    const std::string graphsImage = wb::verifiedImagePath("graphs.fatbin");
    CU_CHECK(cuInit(0));
    CUdevice dev = 0;
    CU_CHECK(cuDeviceGet(&dev, 0));
    CUcontext primary = nullptr;
    CU_CHECK(cuDevicePrimaryCtxRetain(&primary, dev));
    CU_CHECK(cuCtxSetCurrent(primary));
    CUlibrary streams = nullptr, graphs = nullptr;
    CU_CHECK(cuLibraryLoadFromFile(&streams, streamsImage.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0));
    CU_CHECK(cuLibraryLoadFromFile(&graphs, graphsImage.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0));
    const Kernels k = loadKernels(streams, graphs);  // every kernel loaded before any gate closes
    // Under compute-sanitizer (WORKBOOK_UNDER_SANITIZER) timings mean nothing, and on driver 580 some
    // calls waited there for a kernel that waits for the host (lesson 09): the steps that hold work
    // behind a gate say so instead.
    const auto unlessSanitized = [sanitized = wb::underSanitizer()](auto&& run) {
      if (!sanitized) return run();
      std::printf("left out under compute-sanitizer, which may hold a call until a waiting kernel ends, "
                  "and slows every call\n");
    };
    wb::FigureTable figure("kernels,way,microseconds per kernel");

    wb::step(1, "Capture, instantiate, launch");
    captureAndLaunch(k);
    wb::step(2, "What a capture forbids");
    synchronizeDuringCapture(k);
    synchronizeInOtherModes(k);
    legacyDuringCapture(k);
    std::printf("cuMemAlloc during a capture, by the capture's mode:\n");
    captureModes(k);
    wb::step(3, "New arguments for the next launch");
    unlessSanitized([&] { newArgumentsNextLaunch(k); });
    wb::step(4, "Updating from a new capture");
    updateFromNewCapture(k);
    wb::step(5, "One graph launch against N stream launches");
    unlessSanitized([&] { launchCosts(k, figure); });
    wb::step(6, "A graph built by hand");
    unlessSanitized([&] { byHand(k); });
    wb::step(7, "A loop on the GPU: a conditional node");
#if CUDA_VERSION >= 12040
    loopOnTheGpu(k, primary);
#else
    std::printf("left out: built with CUDA %d.%d; conditional nodes arrived in 12.3, and this lesson uses them from "
                "12.4\n", CUDA_VERSION / 1000, CUDA_VERSION % 1000 / 10);
#endif

    CU_CHECK(cuLibraryUnload(graphs));
    CU_CHECK(cuLibraryUnload(streams));
    CU_CHECK(cuCtxSetCurrent(nullptr));
    CU_CHECK(cuDevicePrimaryCtxRelease(dev));
    return figure.save(paths.csv, 5);
  } catch (...) {
    return wb::reportFatal(std::current_exception());
  }
}
