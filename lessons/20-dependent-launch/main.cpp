// Lesson 20: programmatic dependent launch.
//
// What you learn: a kernel launched with cuLaunchKernelEx and the attribute
// CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION may start before the kernel ahead of it in
// its stream has ended (compute capability 9.0 and newer): as soon as every block of that primary
// has executed griddepcontrol.launch_dependents, or exited. Its own griddepcontrol.wait then holds
// it until the primary has completed and everything the primary wrote is visible. What the
// secondary may read before its wait, and after it; what happens without the attribute, and
// without the trigger; CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT, the same dependency across streams;
// the programmatic edges a stream capture of such launches makes, their edge data, and the
// CUDA_ERROR_LOSSY_QUERY a caller meets that asks for a graph's edges or a capture's dependencies
// without it. Overlap is shown with a primary that waits for the host after its trigger, and the
// kernels' own %globaltimer times: no clock on the host, no threshold. Last, a chain of short
// dependent kernels, with and without the attribute, in a stream and in a graph, measured in the
// same run against a kernel's own work, the time per kernel with no gap at all.
//
// APIs: cuLaunchKernelEx, cuEventCreate, cuEventRecord, cuEventQuery, cuStreamWaitEvent,
//       cuStreamBeginCapture, cuStreamEndCapture, cuStreamGetCaptureInfo, cuGraphGetEdges,
//       cuGraphNodeGetDependencies, cuGetProcAddress, cuGraphInstantiate, cuGraphLaunch,
//       cuDeviceGetAttribute
// Run:  ctest -R lesson20   (or build/lessons/lesson20-dependent-launch [--csv lesson20-figure.csv])
#include "figure.hpp"
#include "gate.hpp"
#include "needs.hpp"
#include "workbook.hpp"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

struct Kernels {
  CUfunction gate = nullptr;                                                   // kernels/streams.cu
  CUfunction heldPrimary = nullptr, secondary = nullptr, chainLink = nullptr;  // kernels/dependent_launch.cu
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

//! [launch-ex]
// One block of one thread of f in stream s, through cuLaunchKernelEx with the attributes given
// (none: the launch cuLaunchKernel makes).
CUresult launchEx(CUfunction f, void** args, CUstream s, CUlaunchAttribute* attrs = nullptr,
                  unsigned count = 0) {
  CUlaunchConfig config{};
  config.gridDimX = config.gridDimY = config.gridDimZ = 1;
  config.blockDimX = config.blockDimY = config.blockDimZ = 1;
  config.hStream = s;
  config.attrs = attrs;
  config.numAttrs = count;
  return cuLaunchKernelEx(&config, f, args, nullptr);
}

// "This kernel resolves its dependency on the kernel before it in the stream programmatically."
CUlaunchAttribute programmaticSerialization() {
  CUlaunchAttribute a{};
  a.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
  a.value.programmaticStreamSerializationAllowed = 1;
  return a;
}
//! [launch-ex]

// A primary (held_primary) and its secondary, and what they share. Device memory: the primary's
// results early and late, what the secondary saw, and four times (the primary's start and end, the
// secondary's preamble and the moment after its wait). Pinned words the host reads while they run:
// the gate, the primary's state (1 waiting, 2 released, 3 timed out), and the secondary's "started".
class Pair {
 public:
  struct Seen {
    unsigned early, lateBefore, lateAfter;
    unsigned long long primaryStart, primaryEnd, preamble, afterWait;
    long long sincePrimaryStart(unsigned long long t) const { return static_cast<long long>(t - primaryStart); }
  };
  Pair() {
    CU_CHECK(cuMemAlloc(&words_, 5 * sizeof(unsigned)));
    CU_CHECK(cuMemAlloc(&times_, 4 * sizeof(unsigned long long)));
    CU_CHECK(cuMemsetD32(words_, 0, 5));
    CU_CHECK(cuMemsetD32(times_, 0, 8));
    CU_CHECK(cuCtxSynchronize());  // the memsets ran in the legacy stream, which a non-blocking one does not wait for
  }
  ~Pair() {  // opens the gate and waits, so that no kernel is left reading freed memory
    watch_.write(0, 1);
    cuCtxSynchronize();
    cuMemFree(times_);
    cuMemFree(words_);
  }
  Pair(const Pair&) = delete;
  Pair& operator=(const Pair&) = delete;

  CUresult launchPrimary(const Kernels& k, CUstream s, bool trigger, CUlaunchAttribute* attrs = nullptr,
                         unsigned count = 0) {
    CUdeviceptr early = words_, late = words_ + 4, gate = watch_.device(0), state = watch_.device(1), times = times_;
    unsigned long long deadlineNs = 10'000'000'000ull;  // the primary gives up waiting after 10 s
    unsigned doTrigger = trigger ? 1 : 0;
    void* args[] = {&early, &late, &gate, &deadlineNs, &state, &times, &doTrigger};
    return launchEx(k.heldPrimary, args, s, attrs, count);
  }
  CUresult launchSecondary(const Kernels& k, CUstream s, bool dependent) {
    CUdeviceptr early = words_, late = words_ + 4, started = watch_.device(2), times = times_ + 16, seen = words_ + 8;
    void* args[] = {&early, &late, &started, &times, &seen};
    CUlaunchAttribute attr = programmaticSerialization();
    return launchEx(k.secondary, args, s, dependent ? &attr : nullptr, dependent ? 1 : 0);
  }
  // Spin on pinned memory (no CUDA call) until the secondary says it started, or the primary that
  // it waits at its gate; at most limitMs. Whether it came.
  bool waitForSecondary(double limitMs) const { return waitFor(2, 1, limitMs); }
  bool waitForPrimaryAtGate(double limitMs) const { return waitFor(1, 1, limitMs); }
  bool secondaryStarted() const { return watch_.read(2) != 0; }
  bool primaryEnded() const { return watch_.read(1) >= 2; }
  unsigned primaryState() const { return watch_.read(1); }
  void release() { watch_.write(0, 1); }
  Seen results() const {
    unsigned w[5] = {};
    unsigned long long t[4] = {};
    CU_CHECK(cuMemcpyDtoH(w, words_, sizeof w));
    CU_CHECK(cuMemcpyDtoH(t, times_, sizeof t));
    return {w[2], w[3], w[4], t[0], t[1], t[2], t[3]};
  }

 private:
  bool waitFor(size_t word, unsigned value, double limitMs) const {
    const wb::Stopwatch clock;
    while (watch_.read(word) < value)
      if (clock.ms() > limitMs) return false;
    return true;
  }
  wb::PinnedWords watch_{3};
  CUdeviceptr words_ = 0, times_ = 0;
};

// Every kernel is loaded into the context before a gate closes (lesson 09: under lazy loading a
// first launch may wait for the kernels running there): each runs once here, harmlessly.
Kernels loadKernels(CUlibrary streams, CUlibrary dependent) {
  wb::StreamKernels::load(streams);
  Kernels k;
  k.gate = functionOf(streams, "gate");
  k.heldPrimary = functionOf(dependent, "held_primary");
  k.secondary = functionOf(dependent, "secondary");
  k.chainLink = functionOf(dependent, "chain_link");
  {
    Pair p;
    p.release();  // an open gate: the primary returns at once
    CU_CHECK(p.launchPrimary(k, nullptr, false));
    CU_CHECK(p.launchSecondary(k, nullptr, false));
  }
  CUdeviceptr scratch = 0;
  CU_CHECK(cuMemAlloc(&scratch, 4 * sizeof(unsigned long long)));
  CUdeviceptr times = scratch + 8;
  unsigned index = 0, work = 0;
  void* args[] = {&scratch, &times, &index, &work};
  CU_CHECK(launchEx(k.chainLink, args, nullptr));
  CU_CHECK(cuCtxSynchronize());
  CU_CHECK(cuMemFree(scratch));
  return k;
}

//! [overlap]
// A primary that lets its dependents launch and then waits for the host, and behind it in the same
// stream a secondary launched with the attribute. The host watches pinned memory for the
// secondary's "started" while the primary still waits: no clock and no threshold decide.
void overlap(const Kernels& k) {
  CUstream s = newStream();
  Pair p;
  CU_CHECK(p.launchPrimary(k, s, /*trigger=*/true));
  CU_CHECK(p.launchSecondary(k, s, /*dependent=*/true));
  const bool started = p.waitForSecondary(2000);  // at most 2 s, reading pinned memory only
  const bool primaryRunning = !p.primaryEnded();
  p.release();
  CU_CHECK(cuStreamSynchronize(s));
  const Pair::Seen r = p.results();
  std::printf("the secondary's preamble ran while the primary still waited for the host: %s\n",
              started && primaryRunning ? "yes"
                                        : "no (allowed: the reference calls the overlap opportunistic)");
  std::printf("times from the primary's start: secondary preamble %+lld ns, primary's end %+lld ns, "
              "secondary after its wait %+lld ns\n", r.sincePrimaryStart(r.preamble),
              r.sincePrimaryStart(r.primaryEnd), r.sincePrimaryStart(r.afterWait));
  std::printf("before its wait the secondary read early = %u (written and fenced before the trigger) and "
              "late = %u (written after the host opened the gate); after it, late = %u\n",
              r.early, r.lateBefore, r.lateAfter);
  //! [overlap]
  //! [overlap-2]
  // The early start is opportunistic: printed above. What griddepcontrol.wait and the fence promise
  // holds whether it started early or not; and a preamble that ran early cannot have seen the write
  // the primary made only after the host opened the gate.
  if (started && primaryRunning)
    wb::expect(r.preamble < r.primaryEnd && r.lateBefore == 0,
               "an early preamble timed before the primary's end", "its time or its reads say otherwise");
  wb::expect(r.afterWait >= r.primaryEnd && r.lateAfter == 1,
             "the wait holding the secondary until the primary had ended and its writes were visible",
             "after the wait: late = " + std::to_string(r.lateAfter));
  wb::expect(r.early == 1, "a value fenced before the trigger visible to the secondary's preamble",
             "early = " + std::to_string(r.early));
  CU_CHECK(cuStreamDestroy(s));
}
//! [overlap-2]

//! [serialised]
// The same pair twice more: the secondary launched without the attribute, and launched with it
// behind a primary that never triggers. The host waits until the primary is at its gate (its
// trigger, if any, done), then looks: the secondary must not have started, and its preamble's time
// comes after the primary's last one.
void serialised(const Kernels& k) {
  struct Way {
    const char* name;
    bool trigger, dependent;
  };
  for (const Way w : {Way{"without the attribute, the primary triggering", true, false},
                      Way{"with the attribute, the primary never triggering", false, true}}) {
    CUstream s = newStream();
    Pair p;
    CU_CHECK(p.launchPrimary(k, s, w.trigger));
    CU_CHECK(p.launchSecondary(k, s, w.dependent));
    const bool atGate = p.waitForPrimaryAtGate(2000);
    const bool startedEarly = p.secondaryStarted();
    p.release();
    CU_CHECK(cuStreamSynchronize(s));
    const Pair::Seen r = p.results();
    std::printf("%s: started while the primary waited: %s; preamble %+lld ns after the primary's end; "
                "before its wait it read late = %u\n", w.name, startedEarly ? "YES" : "no",
                static_cast<long long>(r.preamble - r.primaryEnd), r.lateBefore);
    wb::expect(atGate && !startedEarly && r.preamble >= r.primaryEnd && r.lateAfter == 1,
               std::string("the secondary starting only after the primary ended, ") + w.name,
               startedEarly ? "it started while the primary waited" : "another order of the times");
    CU_CHECK(cuStreamDestroy(s));
  }
}
//! [serialised]

//! [event-attribute]
// CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT: the launch records e, which fires once every block of the
// kernel has triggered (or, with triggerAtBlockStart, has started). e must disable timing.
CUlaunchAttribute programmaticEvent(CUevent e, int triggerAtBlockStart) {
  CUlaunchAttribute a{};
  a.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT;
  a.value.programmaticEvent.event = e;
  a.value.programmaticEvent.flags = 0;
  a.value.programmaticEvent.triggerAtBlockStart = triggerAtBlockStart;
  return a;
}
//! [event-attribute]

//! [event]
// The primary in stream a; stream b waits for an event, then runs the secondary, launched plainly.
// Three events: programmatic, fired by the primary's trigger; programmatic with triggerAtBlockStart,
// behind a primary that never triggers; and an ordinary one, recorded after the primary.
void acrossStreams(const Kernels& k) {
  CUstream a = newStream(), b = newStream();
  CUevent e = nullptr;
  CU_CHECK(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
  struct Way {
    const char* name;
    bool programmatic, trigger;
    int atBlockStart;
  };
  for (const Way w : {Way{"programmatic event", true, true, 0},
                      Way{"programmatic event, triggerAtBlockStart, no trigger", true, false, 1},
                      Way{"ordinary event (cuEventRecord)", false, true, 0}}) {
    Pair p;
    CUlaunchAttribute attr = programmaticEvent(e, w.atBlockStart);
    CU_CHECK(p.launchPrimary(k, a, w.trigger, w.programmatic ? &attr : nullptr, w.programmatic ? 1 : 0));
    if (!w.programmatic) CU_CHECK(cuEventRecord(e, a));
    CU_CHECK(cuStreamWaitEvent(b, e, 0));
    CU_CHECK(p.launchSecondary(k, b, /*dependent=*/false));
    // Behind a programmatic event, look for the secondary for a while (whether it starts early is
    // allowed, not promised: only reported); behind an ordinary one, wait for the primary.
    const bool seen = w.programmatic ? p.waitForSecondary(200) : p.waitForPrimaryAtGate(2000);
    const bool started = seen && p.secondaryStarted();
    const bool primaryRunning = !p.primaryEnded();
    const CUresult query = cuEventQuery(e);
    //! [event]
    //! [event-2]
    p.release();
    CU_CHECK(cuStreamSynchronize(a));
    CU_CHECK(cuStreamSynchronize(b));
    const Pair::Seen r = p.results();
    const bool early = started && primaryRunning;
    std::printf("%-52s secondary started while the primary waited: %-3s (cuEventQuery then: %s); "
                "after its wait late = %u\n", w.name, early ? "yes" : "no", wb::errorName(query).c_str(),
                r.lateAfter);
    // The guarantee: after its wait the secondary runs after the primary's end and sees its writes;
    // behind an ordinary event it never starts early. An early start behind a programmatic event is
    // what the attribute allows: this run shows whether the driver took it.
    const bool inOrder = early ? r.preamble < r.primaryEnd : r.preamble >= r.primaryEnd;
    wb::expect((w.programmatic || !early) && inOrder && r.afterWait >= r.primaryEnd && r.lateAfter == 1,
               std::string("the ordering behind a ") + w.name,
               early ? "an ordinary event's dependent started early"
                     : "a dependent ran before the primary ended");
  }
  CU_CHECK(cuEventDestroy(e));
  CU_CHECK(cuStreamDestroy(b));
  CU_CHECK(cuStreamDestroy(a));
}
//! [event-2]

constexpr unsigned kWork = 1024;  // rounds of arithmetic in a chain link: a kernel of a few microseconds

CUresult launchLink(const Kernels& k, CUdeviceptr value, CUdeviceptr times, unsigned index, CUstream s,
                    CUlaunchAttribute* attrs = nullptr, unsigned count = 0) {
  unsigned work = kWork;
  void* args[] = {&value, &times, &index, &work};
  return launchEx(k.chainLink, args, s, attrs, count);
}

#if CUDA_VERSION >= 12030
const char* typeName(unsigned char type) {
  return type == CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC ? "PROGRAMMATIC" : type == 0 ? "DEFAULT" : "another";
}
const char* portName(unsigned char port) {
  return port == CU_GRAPH_KERNEL_NODE_PORT_PROGRAMMATIC   ? "PROGRAMMATIC"
         : port == CU_GRAPH_KERNEL_NODE_PORT_LAUNCH_ORDER ? "LAUNCH_ORDER"
         : port == 0                                      ? "DEFAULT"
                                                          : "another";
}

//! [capture]
// Two links of the chain captured into a graph, the second with the attribute. cuGraphGetEdges_v2
// (12.3+; what cuGraphGetEdges means from 13.0) returns every edge with its edge data: room for 8,
// the count comes back.
void inAGraph(const Kernels& k) {
  CUstream s = newStream();
  CUdeviceptr value = 0, times = 0;
  CU_CHECK(cuMemAlloc(&value, sizeof(unsigned)));
  CU_CHECK(cuMemAlloc(&times, 6 * sizeof(unsigned long long)));
  CU_CHECK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
  CUlaunchAttribute pdl = programmaticSerialization();
  CU_CHECK(launchLink(k, value, times, 0, s));
  CU_CHECK(launchLink(k, value, times, 1, s, &pdl, 1));
  CUgraph graph = nullptr;
  CU_CHECK(cuStreamEndCapture(s, &graph));
  CUgraphNode from[8] = {}, to[8] = {};
  CUgraphEdgeData data[8] = {};
  size_t edges = 8;
  CU_CHECK(cuGraphGetEdges_v2(graph, from, to, data, &edges));
  std::printf("captured: %zu edge; its edge data: type %s, from_port %s, to_port %u\n", edges,
              typeName(data[0].type), portName(data[0].from_port), static_cast<unsigned>(data[0].to_port));
  wb::expect(edges == 1 && data[0].type == CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC &&
                 data[0].from_port == CU_GRAPH_KERNEL_NODE_PORT_PROGRAMMATIC && data[0].to_port == 0,
             "the capture recording a programmatic edge", "another edge");
  //! [capture]
  //! [lossy]
  // The same questions from a caller that passes no edge data: the whole graph's edges, the second
  // node's dependencies, and the entry point a binary built with CUDA 12.0 gets (no edge data at all).
  const CUgraphNode second = to[0];
  size_t asked = 8, deps = 8, counted = 0;
  CUgraphNode depNodes[8] = {};
  const CUresult unawareEdges = cuGraphGetEdges_v2(graph, from, to, nullptr, &asked);
  const CUresult unawareDeps = cuGraphNodeGetDependencies_v2(second, depNodes, nullptr, &deps);
  const CUresult countOnly = cuGraphGetEdges_v2(graph, nullptr, nullptr, nullptr, &counted);
  using GetEdges12 = CUresult(CUDAAPI*)(CUgraph, CUgraphNode*, CUgraphNode*, size_t*);
  void* old = nullptr;
  CU_CHECK(cuGetProcAddress("cuGraphGetEdges", &old, 12000, CU_GET_PROC_ADDRESS_DEFAULT, nullptr));
  size_t oldAsked = 8;
  const CUresult unaware12 = reinterpret_cast<GetEdges12>(old)(graph, from, to, &oldAsked);
  std::printf("without edge data: cuGraphGetEdges %s, cuGraphNodeGetDependencies %s; counting only: %s "
              "(%zu)\n", wb::errorName(unawareEdges).c_str(), wb::errorName(unawareDeps).c_str(),
              wb::errorName(countOnly).c_str(), counted);
  std::printf("cuGraphGetEdges as CUDA 12.0 declared it (cuGetProcAddress, version 12000): %s\n",
              wb::errorName(unaware12).c_str());
  wb::expect(unawareEdges == CUDA_ERROR_LOSSY_QUERY && unawareDeps == CUDA_ERROR_LOSSY_QUERY,
             "a query without edge data refused with CUDA_ERROR_LOSSY_QUERY",
             wb::errorName(unawareEdges) + ", " + wb::errorName(unawareDeps));
  //! [lossy]
  //! [graph-run]
  CUgraphExec exec = nullptr;
  CU_CHECK(cuGraphInstantiate(&exec, graph, 0));
  CU_CHECK(cuMemsetD32Async(value, 0, 1, s));
  CU_CHECK(cuGraphLaunch(exec, s));
  CU_CHECK(cuStreamSynchronize(s));
  unsigned result = 0;
  CU_CHECK(cuMemcpyDtoH(&result, value, sizeof result));
  std::printf("instantiated and launched: value = %u (each link added 1 to what the one before left)\n",
              result);
  wb::expect(result == 2, "the graph's second link reading the first one's result", std::to_string(result));
  CU_CHECK(cuGraphExecDestroy(exec));
  CU_CHECK(cuGraphDestroy(graph));
  CU_CHECK(cuMemFree(times));
  CU_CHECK(cuMemFree(value));
  CU_CHECK(cuStreamDestroy(s));
}
//! [graph-run]

//! [capture-info]
// A library called during its caller's capture asks what the next node in stream b would depend on.
// b has waited on a programmatic event recorded by a captured launch in a: that dependency carries
// edge data, so a query without it is lossy.
void captureInfo(const Kernels& k) {
  CUstream a = newStream(), b = newStream();
  CUevent e = nullptr, joined = nullptr;
  CU_CHECK(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
  CU_CHECK(cuEventCreate(&joined, CU_EVENT_DISABLE_TIMING));
  CUdeviceptr value = 0, times = 0;
  CU_CHECK(cuMemAlloc(&value, sizeof(unsigned)));
  CU_CHECK(cuMemAlloc(&times, 6 * sizeof(unsigned long long)));
  CU_CHECK(cuStreamBeginCapture(a, CU_STREAM_CAPTURE_MODE_GLOBAL));
  CUlaunchAttribute attr = programmaticEvent(e, 0);
  CU_CHECK(launchLink(k, value, times, 0, a, &attr, 1));
  CU_CHECK(cuStreamWaitEvent(b, e, 0));  // b joins a's capture
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  const CUgraphNode* deps = nullptr;
  const CUgraphEdgeData* data = nullptr;
  size_t count = 0;
  const CUresult unaware = cuStreamGetCaptureInfo_v3(b, &status, nullptr, nullptr, &deps, nullptr, &count);
  const CUresult aware = cuStreamGetCaptureInfo_v3(b, &status, nullptr, nullptr, &deps, &data, &count);
  //! [capture-info]
  //! [capture-info-2]
  const bool programmatic =
      aware == CUDA_SUCCESS && count == 1 && data[0].type == CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC;
  std::printf("stream b after waiting on the programmatic event: without edge data %s; with it %s, "
              "%zu dependency, type %s, from_port %s\n", wb::errorName(unaware).c_str(),
              wb::errorName(aware).c_str(), count, count ? typeName(data[0].type) : "-",
              count ? portName(data[0].from_port) : "-");
  CU_CHECK(launchLink(k, value, times, 1, b));
  CU_CHECK(cuEventRecord(joined, b));
  CU_CHECK(cuStreamWaitEvent(a, joined, 0));  // b joins back before the capture ends
  CUgraph graph = nullptr;
  CU_CHECK(cuStreamEndCapture(a, &graph));
  wb::expect(unaware == CUDA_ERROR_LOSSY_QUERY && programmatic,
             "the capture's dependency carrying programmatic edge data, and a query without it refused",
             wb::errorName(unaware) + ", " + wb::errorName(aware));
  CU_CHECK(cuGraphDestroy(graph));
  CU_CHECK(cuMemFree(times));
  CU_CHECK(cuMemFree(value));
  for (CUevent ev : {e, joined}) CU_CHECK(cuEventDestroy(ev));
  for (CUstream st : {a, b}) CU_CHECK(cuStreamDestroy(st));
}
//! [capture-info-2]
#endif

struct ChainRun {
  double perKernelUs, ownWorkUs;
  bool computedRight, noFasterThanItsWork;
};

//! [chain]
// n links, each after the one before in stream s: with pdl, links 1 to n - 1 carry the attribute
// (link 0 has no kernel of the chain before it).
void launchChain(const Kernels& k, CUdeviceptr value, CUdeviceptr times, unsigned n, bool pdl, CUstream s) {
  CUlaunchAttribute attr = programmaticSerialization();
  for (unsigned i = 0; i < n; ++i) {
    const bool dependent = pdl && i > 0;
    CU_CHECK(launchLink(k, value, times, i, s, dependent ? &attr : nullptr, dependent ? 1 : 0));
  }
}

// One run of the chain (from the stream or as a graph), put in behind a gate so that the host's
// submission is not what is measured. From the links' own times: the time per kernel from the
// first one's start to the last one's end, and the mean of each link's own work (its body).
ChainRun runChain(const Kernels& k, CUdeviceptr value, CUdeviceptr times, unsigned n, bool pdl,
                  CUgraphExec graph, CUstream s) {
  CU_CHECK(cuMemsetD32Async(value, 0, 1, s));
  {
    wb::Gate gate(k.gate, s);
    if (graph)
      CU_CHECK(cuGraphLaunch(graph, s));
    else
      launchChain(k, value, times, n, pdl, s);
    // Every launch queued while the gate still held the stream: else the chain ran as it was fed.
    wb::expect(gate.outcome() == wb::Gate::Waiting, "the whole chain queued before it ran",
               "the host's launches waited for the stream (a launch queue too small for the chain?)");
    gate.open();
  }
  CU_CHECK(cuStreamSynchronize(s));
  //! [chain]
  //! [chain-2]
  std::vector<unsigned long long> t(3 * n);
  unsigned result = 0;
  CU_CHECK(cuMemcpyDtoH(t.data(), times, t.size() * sizeof t[0]));
  CU_CHECK(cuMemcpyDtoH(&result, value, sizeof result));
  double work = 0;
  for (unsigned i = 0; i < n; ++i) work += static_cast<double>(t[3 * i + 2] - t[3 * i + 1]);
  const double span = static_cast<double>(t[3 * (n - 1) + 2] - t[0]);
  return {span / n / 1000.0, work / n / 1000.0, result == n, span >= work};
}
//! [chain-2]

struct ChainCost {
  unsigned kernels;
  double us[4];  // per kernel: stream, stream + PDL, graph, graph + PDL
};
const char* const kWays[4] = {"stream", "stream + PDL", "graph", "graph + PDL"};

CUgraphExec capturedChain(const Kernels& k, CUdeviceptr value, CUdeviceptr times, unsigned n, bool pdl,
                          CUstream s, CUgraph* graph) {
  CU_CHECK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
  launchChain(k, value, times, n, pdl, s);
  CU_CHECK(cuStreamEndCapture(s, graph));
  CUgraphExec exec = nullptr;
  CU_CHECK(cuGraphInstantiate(&exec, *graph, 0));
  return exec;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

//! [chain-cost]
// For each chain length: the four ways in turn, 1 warm-up and 5 measured runs each, so that a slow
// moment of the machine falls on all of them; the medians per kernel, and the mean of the links'
// own work over every run (the time per kernel of a chain with no gap at all).
std::vector<ChainCost> chainCosts(const Kernels& k, double* ownWorkUs, bool* right) {
  constexpr unsigned kLongest = 256;
  CUstream s = newStream();
  CUdeviceptr value = 0, times = 0;
  CU_CHECK(cuMemAlloc(&value, sizeof(unsigned)));
  CU_CHECK(cuMemAlloc(&times, 3 * kLongest * sizeof(unsigned long long)));
  std::vector<ChainCost> costs;
  std::vector<double> work;
  *right = true;
  for (unsigned n = 4; n <= kLongest; n *= 4) {
    CUgraph graphs[2] = {};
    const CUgraphExec execs[2] = {capturedChain(k, value, times, n, false, s, &graphs[0]),
                                  capturedChain(k, value, times, n, true, s, &graphs[1])};
    std::vector<double> us[4];
    for (int rep = 0; rep < 6; ++rep)
      for (int way = 0; way < 4; ++way) {
        const ChainRun r = runChain(k, value, times, n, way % 2 == 1, way >= 2 ? execs[way % 2] : nullptr, s);
        *right = *right && r.computedRight && r.noFasterThanItsWork;
        if (rep == 0) continue;
        us[way].push_back(r.perKernelUs);
        work.push_back(r.ownWorkUs);
      }
    //! [chain-cost]
    //! [chain-cost-2]
    costs.push_back({n, {median(us[0]), median(us[1]), median(us[2]), median(us[3])}});
    for (int i = 0; i < 2; ++i) {
      CU_CHECK(cuGraphExecDestroy(execs[i]));
      CU_CHECK(cuGraphDestroy(graphs[i]));
    }
  }
  double sum = 0;
  for (double w : work) sum += w;
  *ownWorkUs = sum / work.size();
  CU_CHECK(cuMemFree(times));
  CU_CHECK(cuMemFree(value));
  CU_CHECK(cuStreamDestroy(s));
  return costs;
}
//! [chain-cost-2]

//! [chain-table]
void reportChain(const std::vector<ChainCost>& costs, double ownWorkUs, bool right) {
  std::printf("Time per kernel on the GPU, microseconds (median of 5 after a warm-up):\n");
  std::printf("  %7s  %8s  %12s  %8s  %11s\n", "kernels", kWays[0], kWays[1], kWays[2], kWays[3]);
  for (const ChainCost& c : costs)
    std::printf("  %7u  %8.3f  %12.3f  %8.3f  %11.3f\n", c.kernels, c.us[0], c.us[1], c.us[2], c.us[3]);
  std::printf("a kernel's own work (the time per kernel with no gap at all): %.3f us\n", ownWorkUs);
  const ChainCost& most = costs.back();
  std::printf("at %u kernels the gap per kernel: stream %.3f us, with PDL %.3f us; graph %.3f us, "
              "with PDL %.3f us\n", most.kernels, most.us[0] - ownWorkUs, most.us[1] - ownWorkUs,
              most.us[2] - ownWorkUs, most.us[3] - ownWorkUs);
  wb::expect(right, "every chain computing its length, and no run faster than its kernels' own work",
             "a chain with another value, or a span shorter than its work");
  // Whether PDL shortens the chain is what this machine's scheduler did (the overlap is
  // opportunistic): the ratio is printed, not asserted.
  std::printf("at %u kernels PDL took %.2fx the time per kernel in a stream, %.2fx in a graph\n",
              most.kernels, most.us[1] / most.us[0], most.us[3] / most.us[2]);
}
//! [chain-table]

wb::FigureTable tableOf(const std::vector<ChainCost>& costs, double ownWorkUs) {
  wb::FigureTable table("kernels,way,microseconds per kernel");
  for (const ChainCost& c : costs)
    for (int way = 0; way < 4; ++way) table.row("%u,%s,%.3f", c.kernels, kWays[way], c.us[way]);
  if (!costs.empty()) table.row("0,limit: no gap (a kernel's own work),%.3f", ownWorkUs);
  return table;
}

int main(int argc, char** argv) {
  wb::FigurePaths paths;
  if (!wb::parseFigureArgs(argc, argv, paths, "lesson20-figure.csv")) return wb::kExitUsage;
  try {
    wb::checkEnvironment({
        {"CUDA_LAUNCH_BLOCKING", wb::Under::Stops,
         "every launch would wait for its kernel: the launch of a primary that waits for the host would wait for "
         "the host, and no secondary could be launched beside it"},
        {"CUDA_DEVICE_MAX_CONNECTIONS", wb::Under::Stops,
         "two streams could share one work queue, so step 3's secondary in stream b could wait behind the primary "
         "held in stream a whatever the event says", wb::belowDefault},
        {"CUDA_SCALE_LAUNCH_QUEUES", wb::Under::Stops,
         "step 5 queues up to 256 launches behind a gate: a smaller launch queue makes the host wait for the "
         "gate, and the chain would run while it is still being submitted"},
    });
    // The images are checked before the driver starts: a damaged one stops the program in a moment.
    const std::string streamsImage = wb::verifiedImagePath("streams.fatbin");
    const std::string dependentImage = wb::verifiedImagePath("dependent_launch.fatbin");
    CU_CHECK(cuInit(0));
    CUdevice dev = 0;
    CU_CHECK(cuDeviceGet(&dev, 0));
    int major = 0, minor = 0;
    CU_CHECK(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
    CU_CHECK(cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev));
    CUcontext primary = nullptr;
    CU_CHECK(cuDevicePrimaryCtxRetain(&primary, dev));
    CU_CHECK(cuCtxSetCurrent(primary));
    CUlibrary streams = nullptr, dependent = nullptr;
    CU_CHECK(cuLibraryLoadFromFile(&streams, streamsImage.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0));
    CU_CHECK(cuLibraryLoadFromFile(&dependent, dependentImage.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0));
    //! [too-old]
    // Below compute capability 9.0 the programming guide's APIs "require at least compute capability
    // 9.0 to provide overlapping execution", and griddepcontrol, in every kernel here, needs sm_90:
    // this lesson's row of lessons/needs.tsv says 9.0, and the check reads it (common/needs.hpp).
    const bool capable = wb::meetsComputeCapability(major, minor);
    const std::string tooOld = "left out: device 0 has compute capability " + std::to_string(major) + "." +
                               std::to_string(minor) + "; programmatic dependent launch is \"available "
                               "starting with devices of compute capability 9.0\" (programming guide), and "
                               "griddepcontrol requires sm_90 (PTX ISA)\n";
    //! [too-old]
    // Under compute-sanitizer (WORKBOOK_UNDER_SANITIZER) no kernel ran beside a kernel that waits for
    // the host (lesson 09), and every call is slowed: the steps that need either say so instead.
    const bool sanitized = wb::underSanitizer();
    const char* leftOut = "left out under compute-sanitizer, which ran no kernel beside one that waits, and slows "
                          "every call\n";
    std::printf("device 0: compute capability %d.%d\n", major, minor);
    const Kernels k = capable ? loadKernels(streams, dependent) : Kernels{};
    std::vector<ChainCost> costs;
    double ownWorkUs = 0;
    bool right = true;

    wb::step(1, "A secondary that starts before its primary ends");
    if (!capable || sanitized)
      std::printf("%s", capable ? leftOut : tooOld.c_str());
    else
      overlap(k);
    wb::step(2, "Without the attribute, without the trigger");
    if (!capable || sanitized)
      std::printf("%s", capable ? leftOut : tooOld.c_str());
    else
      serialised(k);
    wb::step(3, "A programmatic event: the same dependency across streams");
    if (!capable || sanitized)
      std::printf("%s", capable ? leftOut : tooOld.c_str());
    else
      acrossStreams(k);
    wb::step(4, "Dependent launches in a graph: programmatic edges and edge data");
#if CUDA_VERSION >= 12030
    if (!capable) {
      std::printf("%s", tooOld.c_str());
    } else {
      inAGraph(k);
      captureInfo(k);
    }
#else
    std::printf("left out: built with CUDA %d.%d; edge data (CUgraphEdgeData and the calls that take it) came with "
                "12.3\n", CUDA_VERSION / 1000, CUDA_VERSION % 1000 / 10);
#endif
    wb::step(5, "A chain of short kernels: what PDL saves");
    if (!capable || sanitized) {
      std::printf("%s", capable ? leftOut : tooOld.c_str());
    } else {
      costs = chainCosts(k, &ownWorkUs, &right);
      reportChain(costs, ownWorkUs, right);
    }

    CU_CHECK(cuLibraryUnload(dependent));
    CU_CHECK(cuLibraryUnload(streams));
    CU_CHECK(cuCtxSetCurrent(nullptr));
    CU_CHECK(cuDevicePrimaryCtxRelease(dev));
    return tableOf(costs, ownWorkUs).save(paths.csv, 5);
  } catch (...) {
    return wb::reportFatal(std::current_exception());
  }
}
