// The checks of lesson 09's exercises (lessons/09-streams-events/exercises.cpp). Pending work comes
// from the lesson's gate kernel (common/gate.hpp): nothing sleeps, and every gate gives up at its
// deadline, so a learner's function that waits for the GPU costs seconds, never a hang. Order is
// proven by what arrived, by what the gate saw, and by the graph a stream capture draws of the
// learner's calls, never by timing; the one timed check compares the pipeline with references
// measured in the same run. A failure the driver would not give on demand is made by the ledger
// (ledger.hpp); cuFuncLoad, which the ledger does not stand before, is interposed here. Each case's
// name begins with the requirements it verifies.
#include "check.hpp"
#include "gate.hpp"
#include "09-streams-events/exercises.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#if CUDA_VERSION >= 12040
WBX_INTERPOSE(cuFuncLoad, (CUfunction f), (f))
#endif

namespace {

// The primary context of device 0 (kept retained by the process, so that each case does not build
// it again), current, and the gate, stamp and burn kernels loaded into it.
struct Lab {
  wbt::RetainedPrimary primary{wbt::deviceKeepingPrimary(0)};
  wbt::Pushed current{primary.get()};
  CUlibrary library = nullptr;
  wb::StreamKernels k;
  Lab() {
    CU_CHECK(cuLibraryLoadFromFile(&library, wb::verifiedImagePath("streams.fatbin").c_str(), nullptr, nullptr, 0,
                                   nullptr, nullptr, 0));
    k = wb::StreamKernels::load(library);  // every kernel loaded before any gate closes
  }
  ~Lab() { cuLibraryUnload(library); }
};

// Only the primary context of device 0, current, for checks that launch no kernel of their own.
struct Primary {
  wbt::RetainedPrimary primary{wbt::deviceKeepingPrimary(0)};
  wbt::Pushed current{primary.get()};
};

using wbt::Stream;

class Event {
 public:
  Event() { CU_CHECK(cuEventCreate(&e_, CU_EVENT_DEFAULT)); }
  ~Event() { cuEventDestroy(e_); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  CUevent get() const { return e_; }

 private:
  CUevent e_ = nullptr;
};

// n floats of pinned host memory, freed at scope exit.
class PinnedFloats {
 public:
  explicit PinnedFloats(size_t n) { CU_CHECK(cuMemAllocHost(reinterpret_cast<void**>(&p_), n * sizeof(float))); }
  ~PinnedFloats() { cuMemFreeHost(p_); }
  PinnedFloats(const PinnedFloats&) = delete;
  PinnedFloats& operator=(const PinnedFloats&) = delete;
  float* get() const { return p_; }

 private:
  float* p_ = nullptr;
};

void launchBurn(CUfunction burn, CUdeviceptr data, unsigned n, unsigned rounds, CUstream s) {
  void* args[] = {&data, &n, &rounds};
  CU_CHECK(cuLaunchKernel(burn, ex09::kBurnBlocks, 1, 1, ex09::kBurnThreads, 1, 1, 0, s, args, nullptr));
}

template <typename T>
std::vector<T> readBack(CUdeviceptr p, size_t n) {
  std::vector<T> v(n);
  CU_CHECK(cuMemcpyDtoH(v.data(), p, n * sizeof(T)));
  return v;
}

// What the pipeline must produce: the host data copied plainly and burned in one launch. burn works
// on each element alone, so how the launches split the data does not change a bit of the result.
std::vector<float> burnedReference(const Lab& lab, const float* host, unsigned n, unsigned rounds) {
  wbt::DeviceBuffer data(size_t(n) * sizeof(float));
  CU_CHECK(cuMemcpyHtoD(data.get(), host, size_t(n) * sizeof(float)));
  launchBurn(lab.k.burn, data.get(), n, rounds, nullptr);
  CU_CHECK(cuCtxSynchronize());
  return readBack<float>(data.get(), n);
}

float elapsedMs(const Event& a, const Event& b) {
  float ms = 0;
  CU_CHECK(cuEventElapsedTime(&ms, a.get(), b.get()));
  return ms;
}

// What a call of the code under check did: "returned", "std::invalid_argument", or "other: " and
// another exception's text. wb::NotDone passes through, so that a starting body is reported as not
// done. Never call the learner's code inside CHECK(): doctest would catch NotDone there.
template <typename Call>
std::string outcomeOf(Call&& call) {
  try {
    call();
    return "returned";
  } catch (const wb::NotDone&) {
    throw;
  } catch (const std::invalid_argument&) {
    return "std::invalid_argument";
  } catch (const std::exception& e) {
    return std::string("other: ") + e.what();
  }
}

// The graph a stream capture made, as node types and direct dependencies, destroyed at scope exit.
class CapturedGraph {
 public:
  explicit CapturedGraph(CUgraph graph) : graph_(graph) {
    size_t count = 0;
    CU_CHECK(cuGraphGetNodes(graph_, nullptr, &count));
    std::vector<CUgraphNode> nodes(count);
    CU_CHECK(cuGraphGetNodes(graph_, nodes.data(), &count));
    std::map<CUgraphNode, size_t> index;
    nodes_ = nodes;
    types_.resize(count);
    parents_.resize(count);
    for (size_t i = 0; i < count; ++i) {
      index[nodes[i]] = i;
      CU_CHECK(cuGraphNodeGetType(nodes[i], &types_[i]));
    }
    size_t edges = 0;
#if CUDA_VERSION >= 13000
    CU_CHECK(cuGraphGetEdges(graph_, nullptr, nullptr, nullptr, &edges));
    std::vector<CUgraphNode> from(edges), to(edges);
    std::vector<CUgraphEdgeData> data(edges);
    CU_CHECK(cuGraphGetEdges(graph_, from.data(), to.data(), data.data(), &edges));
#else
    CU_CHECK(cuGraphGetEdges(graph_, nullptr, nullptr, &edges));
    std::vector<CUgraphNode> from(edges), to(edges);
    CU_CHECK(cuGraphGetEdges(graph_, from.data(), to.data(), &edges));
#endif
    for (size_t e = 0; e < edges; ++e) parents_[index.at(to[e])].push_back(index.at(from[e]));
  }
  ~CapturedGraph() { cuGraphDestroy(graph_); }
  CapturedGraph(const CapturedGraph&) = delete;
  CapturedGraph& operator=(const CapturedGraph&) = delete;

  std::vector<size_t> nodesOf(CUgraphNodeType type) const {
    std::vector<size_t> out;
    for (size_t i = 0; i < types_.size(); ++i)
      if (types_[i] == type) out.push_back(i);
    return out;
  }
  // The launch shape of a kernel node: grid and block, x, y and z.
  struct Shape {
    unsigned grid[3], block[3];
    bool operator==(const Shape& o) const {
      return std::equal(grid, grid + 3, o.grid) && std::equal(block, block + 3, o.block);
    }
  };
  Shape launchShape(size_t node) const {
    CUDA_KERNEL_NODE_PARAMS p{};
    CU_CHECK(cuGraphKernelNodeGetParams(nodes_[node], &p));
    return Shape{{p.gridDimX, p.gridDimY, p.gridDimZ}, {p.blockDimX, p.blockDimY, p.blockDimZ}};
  }
  // Every node that node waits for, directly or through others.
  std::vector<bool> ancestors(size_t node) const {
    std::vector<bool> seen(types_.size(), false);
    std::vector<size_t> todo = parents_[node];
    while (!todo.empty()) {
      const size_t n = todo.back();
      todo.pop_back();
      if (seen[n]) continue;
      seen[n] = true;
      todo.insert(todo.end(), parents_[n].begin(), parents_[n].end());
    }
    return seen;
  }

 private:
  CUgraph graph_;
  std::vector<CUgraphNode> nodes_;
  std::vector<CUgraphNodeType> types_;
  std::vector<std::vector<size_t>> parents_;
};

// A library loaded for one test, unloaded at scope exit.
class Library {
 public:
  explicit Library(const char* file) {
    CU_CHECK(cuLibraryLoadFromFile(&lib_, wb::verifiedImagePath(file).c_str(), nullptr, nullptr, 0, nullptr, nullptr,
                                   0));
  }
  ~Library() { cuLibraryUnload(lib_); }
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;
  CUlibrary get() const { return lib_; }
  CUfunction kernel(const char* name) const {
    CUkernel k = nullptr;
    CU_CHECK(cuLibraryGetKernel(&k, lib_, name));
    return reinterpret_cast<CUfunction>(k);
  }

 private:
  CUlibrary lib_ = nullptr;
};

bool eagerLoading() {
  CUmoduleLoadingMode mode = CU_MODULE_LAZY_LOADING;
  CU_CHECK(cuModuleGetLoadingMode(&mode));
  return mode == CU_MODULE_EAGER_LOADING;
}

// In the current context: the gate kernel launched in one stream, then a stamp in another. Whether
// the stamp ran while the gate still waited (a stamp whose launch had to load it waits for the gate
// to give up), and whether it ran at all.
struct StampBesideGate {
  bool stamped = false;
  wb::Gate::Outcome whenStamped = wb::Gate::TimedOut;
};
StampBesideGate stampBesideGate(const Library& lib) {
  const CUfunction gateKernel = lib.kernel("gate"), stampKernel = lib.kernel("stamp");
  wb::PinnedWords words(2);  // [0] the stamp counter, [1] the stamp
  CUdeviceptr counter = words.device(0), slot = words.device(1);
  void* args[] = {&counter, &slot};
  Stream waiting, other;
  StampBesideGate seen;
  {
    wb::Gate gate(gateKernel, waiting.get(), 2.0);  // nothing but the stamp's launch between the gate and the wait
    CU_CHECK(cuLaunchKernel(stampKernel, 1, 1, 1, 1, 1, 1, 0, other.get(), args, nullptr));
    other.sync();
    seen.whenStamped = gate.outcome();
  }
  seen.stamped = words.read(1) == 1;
  return seen;
}

// How many functions of the library's module in the current context are not fully loaded, and how
// many it has (cuModuleGetFunctionCount, CUDA 12.4); 0 and 0 with older toolkits.
struct Loaded {
  unsigned functions = 0, notLoaded = 0;
};
Loaded loadedHere(const Library& lib) {
  Loaded l;
  CUmodule module = nullptr;
  const CUresult found = cuLibraryGetModule(&module, lib.get());
  const std::string foundName = wb::errorName(found);
  CAPTURE(foundName);
  REQUIRE_MESSAGE(found == CUDA_SUCCESS, "the library has no module in this context");
#if CUDA_VERSION >= 12040
  CU_CHECK(cuModuleGetFunctionCount(&l.functions, module));
  std::vector<CUfunction> functions(l.functions);
  CU_CHECK(cuModuleEnumerateFunctions(functions.data(), l.functions, module));
  for (CUfunction f : functions) {
    CUfunctionLoadingState state = CU_FUNCTION_LOADING_STATE_UNLOADED;
    CU_CHECK(cuFuncIsLoaded(&state, f));
    l.notLoaded += state != CU_FUNCTION_LOADING_STATE_LOADED;
  }
#endif
  return l;
}

// Whole frames of 32-bit words, each frame's words distinct from every other frame's.
std::vector<unsigned> frame(unsigned f, size_t words) {
  std::vector<unsigned> v(words);
  for (size_t i = 0; i < words; ++i) v[i] = static_cast<unsigned>((f + 1) * 1000003u + i);
  return v;
}

// How many pinned buffers and events the process has asked the driver for so far.
long allocationsMade() {
  return wbx::calls("cuMemAllocHost") + wbx::calls("cuMemHostAlloc") + wbx::calls("cuEventCreate");
}

}  // namespace

EXERCISE("pipeline", "A chunked copy/compute pipeline in two streams",
         "For each part: cuMemcpyHtoDAsync in copies, cuEventRecord an event in copies, cuStreamWaitEvent(compute, "
         "event, 0), then cuLaunchKernel burn in compute. One event may be recorded again for every part (a wait "
         "takes the record current at its call); destroy it at the end, and in a catch before rethrowing. The last "
         "part is n - (chunks - 1) * (n / chunks) long. Launching burn in copies gives the right values but no "
         "overlap; launching it in compute without the wait burns data that has not arrived; recording the event "
         "before the copy lets the kernel pass it.") {
  TEST_CASE("R1 R2 R3 R4: pipeline returns before anything has run, leaves no handle behind, and every part, the remainder included, is burned after it has arrived") {
    Lab lab;
    const unsigned n = (1u << 20) + 5, chunks = 8, rounds = 16;  // the last part has 5 floats more
    PinnedFloats host(n);
    for (unsigned i = 0; i < n; ++i) host.get()[i] = static_cast<float>(i % 1000) / 1000.0f;
    wbt::DeviceBuffer device(size_t(n) * sizeof(float));
    wbt::setWords(device.get(), 0xBF800000u, n);  // -1.0f: what a burn that ran before its copy would burn
    Stream copies, compute;
    wb::Gate::Outcome seen = wb::Gate::TimedOut;
    std::string left;
    {
      wb::Gate gate(lab.k.gate, copies.get(), 2.0);  // a pipeline that waits for its work waits 2 s at most
      const wbx::Holdings before = wbx::holdings();
      ex09::pipeline(lab.k.burn, host.get(), device.get(), n, chunks, rounds, copies.get(), compute.get());
      seen = gate.outcome();
      left = wbx::holdings().differenceFrom(before);
      gate.open();
      copies.sync();
      compute.sync();
    }
    CHECK_MESSAGE(seen == wb::Gate::Waiting, "pipeline waited for the streams: it must only enqueue");
    CAPTURE(left);
    CHECK_MESSAGE(left == "", "pipeline left handles behind: destroy every event it made before returning");
    const std::vector<float> want = burnedReference(lab, host.get(), n, rounds);
    const std::vector<float> got = readBack<float>(device.get(), n);
    size_t wrong = 0, first = n;
    for (size_t i = 0; i < n; ++i)
      if (got[i] != want[i] && wrong++ == 0) first = i;
    CAPTURE(wrong);
    CAPTURE(first);
    CHECK_MESSAGE(wrong == 0,
                  "elements that are not the burned copy: a part burned before it arrived, twice, or not at all "
                  "(the remainder?)");
  }

  TEST_CASE("R1 R2: as a graph: each part's kernel depends on its own copy and on no later copy, no copy depends on a kernel, and each kernel has the launch shape the task fixes") {
    Lab lab;
    const unsigned n = 1u << 16, chunks = 4;
    PinnedFloats host(n);
    std::memset(host.get(), 0, size_t(n) * sizeof(float));
    wbt::DeviceBuffer device(size_t(n) * sizeof(float));
    Event joined;  // made before the capture: it brings compute's work back into copies at the end
    Stream copies, compute;  // destroyed first: a capture left open by an exception is ended there
    // RELAXED: the pipeline may create and destroy events while the capture is open.
    CU_CHECK(cuStreamBeginCapture(copies.get(), CU_STREAM_CAPTURE_MODE_RELAXED));
    ex09::pipeline(lab.k.burn, host.get(), device.get(), n, chunks, 1, copies.get(), compute.get());
    CUstreamCaptureStatus computeStatus = CU_STREAM_CAPTURE_STATUS_NONE;
    CU_CHECK(cuStreamIsCapturing(compute.get(), &computeStatus));
    if (computeStatus == CU_STREAM_CAPTURE_STATUS_ACTIVE) {  // compute joined by waiting on an event of copies
      CU_CHECK(cuEventRecord(joined.get(), compute.get()));
      CU_CHECK(cuStreamWaitEvent(copies.get(), joined.get(), 0));
    }
    CUgraph graph = nullptr;
    const CUresult ended = cuStreamEndCapture(copies.get(), &graph);
    const std::string endedName = wb::errorName(ended);
    CAPTURE(endedName);
    REQUIRE_MESSAGE((ended == CUDA_SUCCESS && graph),
                    "the capture of the pipeline failed: did pipeline wait for a stream or query one?");
    const CapturedGraph g(graph);
    const std::vector<size_t> copyNodes = g.nodesOf(CU_GRAPH_NODE_TYPE_MEMCPY);
    const std::vector<size_t> kernelNodes = g.nodesOf(CU_GRAPH_NODE_TYPE_KERNEL);
    const size_t copiesCaptured = copyNodes.size(), kernelsCaptured = kernelNodes.size();
    CAPTURE(copiesCaptured);
    CAPTURE(kernelsCaptured);
    REQUIRE_MESSAGE(copiesCaptured == chunks, "not one copy per part in copies");
    REQUIRE_MESSAGE(kernelsCaptured == chunks,
                    "not one kernel per part behind the copies: is each launch in compute after a cuStreamWaitEvent "
                    "on an event of copies?");
    size_t copiesAfterAKernel = 0;
    for (size_t c : copyNodes) {
      const std::vector<bool> before = g.ancestors(c);
      copiesAfterAKernel += std::any_of(kernelNodes.begin(), kernelNodes.end(), [&](size_t k) { return before[k]; });
    }
    // Copies run in order in copies, so kernel i (counting from 1) waits for exactly i copies: its
    // own part's and the earlier ones'. Fewer: it does not wait for its own; more: for a later one.
    std::vector<size_t> copiesBeforeKernel;
    for (size_t k : kernelNodes) {
      const std::vector<bool> before = g.ancestors(k);
      copiesBeforeKernel.push_back(
          static_cast<size_t>(std::count_if(copyNodes.begin(), copyNodes.end(), [&](size_t c) { return before[c]; })));
    }
    std::sort(copiesBeforeKernel.begin(), copiesBeforeKernel.end());
    std::string waits;
    for (size_t w : copiesBeforeKernel) waits += std::to_string(w) + " ";
    CAPTURE(waits);
    std::vector<size_t> want(chunks);
    for (unsigned i = 0; i < chunks; ++i) want[i] = i + 1;
    CHECK_MESSAGE(copiesAfterAKernel == 0, "a copy waits for a kernel: part i + 1 cannot be copied while part i burns");
    CHECK_MESSAGE(copiesBeforeKernel == want,
                  "the kernels do not each wait for their own part's copy and no later one (waits: how many copies "
                  "each kernel waits for, in order; 1 2 3 4 is right): an event recorded before its copy, or one "
                  "wait for all copies?");
    // burn strides over any grid, so the values cannot tell the launch shape: the graph can.
    const CapturedGraph::Shape fixed{{ex09::kBurnBlocks, 1, 1}, {ex09::kBurnThreads, 1, 1}};
    size_t otherShapes = 0;
    for (size_t k : kernelNodes) otherShapes += !(g.launchShape(k) == fixed);
    CAPTURE(otherShapes);
    CHECK_MESSAGE(otherShapes == 0, "kernels launched with another shape than kBurnBlocks blocks of kBurnThreads threads");
  }

  TEST_CASE("R5: a cuStreamWaitEvent or a kernel launch that fails in the middle is thrown, and no event is left behind") {
    Lab lab;
    const unsigned n = 1u << 16, chunks = 4;
    PinnedFloats host(n);
    std::memset(host.get(), 0, size_t(n) * sizeof(float));
    wbt::DeviceBuffer device(size_t(n) * sizeof(float));
    Stream copies, compute;
    struct Failing {
      const char* call;
      unsigned nth;
      CUresult error;
    };
    // The second part's wait, and the third part's launch (a launch error is returned by the call
    // itself too, not only at the next synchronisation).
    const Failing plan[] = {{"cuStreamWaitEvent", 2, CUDA_ERROR_INVALID_HANDLE},
                            {"cuLaunchKernel", 3, CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES}};
    for (const Failing& f : plan) {
      const std::string call = f.call;
      CAPTURE(call);
      const wbx::Holdings before = wbx::holdings();
      std::string outcome;
      bool fired = false;
      {
        wbx::FailCall fail(f.call, f.error, f.nth);  // fails without reaching the driver
        outcome = outcomeOf(
            [&] { ex09::pipeline(lab.k.burn, host.get(), device.get(), n, chunks, 1, copies.get(), compute.get()); });
        fired = fail.fired();
      }
      copies.sync();
      compute.sync();
      const std::string left = wbx::holdings().differenceFrom(before);
      CAPTURE(outcome);
      CAPTURE(left);
      if (call == "cuStreamWaitEvent")
        REQUIRE_MESSAGE(fired, "pipeline made fewer than two cuStreamWaitEvent calls for four parts: each part's "
                               "kernel waits for its own copy");
      if (!fired) {
        MESSAGE("pipeline made fewer than three calls of " << call << ": that failure could not be shown");
        continue;
      }
      CHECK_MESSAGE(outcome != "returned", "a driver call failed and pipeline returned as if all was enqueued");
      CHECK_MESSAGE(left == "", "after the failure, pipeline left handles behind");
    }
  }

  TEST_CASE("R2: the pipeline saves at least 0.8 of what a perfect overlap would, against copying and burning alone in this run") {
    Lab lab;
    const unsigned n = 1u << 25, chunks = 8, part = n / chunks;  // 128 MiB in parts of 16 MiB
    const size_t partBytes = size_t(part) * sizeof(float);
    PinnedFloats host(n);
    std::memset(host.get(), 0, size_t(n) * sizeof(float));
    wbt::DeviceBuffer device(size_t(n) * sizeof(float));
    Stream copies, compute;
    // The learner's code first: it also warms up what the timed runs use.
    ex09::pipeline(lab.k.burn, host.get(), device.get(), n, chunks, 1, copies.get(), compute.get());
    copies.sync();
    compute.sync();
    if (wb::underSanitizer())
      throw wbx::Skipped("compute-sanitizer serialises the GPU's work: there is no overlap to time");

    // From an event in copies to the end of the work of both streams, the better of two runs.
    Event start, joined, end;
    const auto timed = [&](auto&& enqueue) {
      float best = 0;
      for (int run = 0; run < 2; ++run) {
        CU_CHECK(cuEventRecord(start.get(), copies.get()));
        CU_CHECK(cuStreamWaitEvent(compute.get(), start.get(), 0));
        enqueue();
        CU_CHECK(cuEventRecord(joined.get(), copies.get()));
        CU_CHECK(cuStreamWaitEvent(compute.get(), joined.get(), 0));
        CU_CHECK(cuEventRecord(end.get(), compute.get()));
        CU_CHECK(cuEventSynchronize(end.get()));
        const float ms = elapsedMs(start, end);
        best = run == 0 ? ms : std::min(best, ms);
      }
      return best;
    };
    unsigned rounds = 64;
    const auto copyAll = [&] {
      for (unsigned c = 0; c < chunks; ++c)
        CU_CHECK(cuMemcpyHtoDAsync(device.get() + c * partBytes, host.get() + size_t(c) * part, partBytes,
                                   copies.get()));
    };
    const auto burnAll = [&] {
      for (unsigned c = 0; c < chunks; ++c)
        launchBurn(lab.k.burn, device.get() + c * partBytes, part, rounds, compute.get());
    };
    const float copyMs = timed(copyAll);
    float burnMs = timed(burnAll);
    for (int trial = 0; trial < 4 && std::fabs(burnMs - copyMs) > 0.05f * copyMs; ++trial) {
      rounds = std::max(1u, static_cast<unsigned>(rounds * copyMs / std::max(burnMs, 0.001f)));
      burnMs = timed(burnAll);
    }
    const float pipelineMs = timed(
        [&] { ex09::pipeline(lab.k.burn, host.get(), device.get(), n, chunks, rounds, copies.get(), compute.get()); });
    const float sum = copyMs + burnMs, ideal = std::max(copyMs, burnMs) + std::min(copyMs, burnMs) / chunks;
    const float limit = sum - 0.8f * (sum - ideal);
    MESSAGE("copying alone " << copyMs << " ms, burning alone " << burnMs << " ms (" << rounds << " rounds): "
            << "in sequence " << sum << " ms, perfectly pipelined " << ideal << " ms; the pipeline " << pipelineMs
            << " ms, at most " << limit << " ms allowed");
    CHECK_MESSAGE(pipelineMs <= limit, "the parts did not overlap: are the copies and the kernels in two streams?");
  }
}

EXERCISE("preload-kernels", "Every kernel of a library loaded before a gate closes",
         "cuLibraryGetKernelCount and cuLibraryEnumerateKernels list the CUkernels (CUDA 12.4); for each, "
         "cuKernelGetFunction gives its CUfunction in the current context, and CU_CHECK(cuFuncLoad) finishes loading "
         "it. A CUkernel from cuLibraryGetKernel is a process-wide handle: having one loads nothing into any "
         "context. Touch no context: the current one is where the loading must happen, each time.") {
  TEST_CASE("R1 R3: after preloadKernels a stamp launched beside a waiting gate runs at once, every function of the library is loaded in the context, and the context stack is as it was") {
    wbt::RetainedPrimary primary(wbt::deviceKeepingPrimary(0));
    wbt::Pushed current(primary.get());
    Library lib("streams.fatbin");  // loaded afresh: none of its kernels is loaded in any context yet
    const std::vector<CUcontext> stackBefore = wbx::contextStack();
    ex09::preloadKernels(lib.get());
    const std::vector<CUcontext> stackAfter = wbx::contextStack();
    CHECK_MESSAGE(stackAfter == stackBefore, "preloadKernels changed the caller's context stack");
    if (eagerLoading())
      throw wbx::Skipped(
          "under CUDA_MODULE_LOADING=EAGER a library is loaded whole at once: nothing is left to preload");

    // First what lazy loading does to an unloaded kernel: the stamp's launch would wait for the gate.
    if (wb::underSanitizer()) {
      MESSAGE("the stamp beside the gate is left out under compute-sanitizer, which runs one kernel at a time");
    } else {
      const StampBesideGate seen = stampBesideGate(lib);
      CHECK(seen.stamped);
      CHECK_MESSAGE(seen.whenStamped == wb::Gate::Waiting,
                    "the stamp ran only once the gate had given up: its launch had to load it, and loading waited for "
                    "the running gate");
    }

    // Then what the driver says about every function of the library in this context.
    const Loaded here = loadedHere(lib);
#if CUDA_VERSION >= 12040
    CAPTURE(here.functions);
    CHECK(here.functions >= 3);  // gate, stamp and burn
    CHECK_MESSAGE(here.notLoaded == 0, "functions of the library are not loaded in the context (cuFuncIsLoaded)");
#endif
  }

  TEST_CASE("R1 R2 R3: one library preloaded in the primary context, then in a context of the caller's own (and with two GPUs in device 1's primary context): every function is loaded in each") {
    const int devices = wbt::initDriver();
    wbt::RetainedPrimary primary(wbt::deviceKeepingPrimary(0));
    wbt::Pushed current(primary.get());
    Library lib("streams.fatbin");
    ex09::preloadKernels(lib.get());
    if (eagerLoading()) throw wbx::Skipped("under CUDA_MODULE_LOADING=EAGER nothing is left to preload");
    const Loaded inPrimary = loadedHere(lib);

    Loaded inOwn, inSecond;
    StampBesideGate ownStamp;
    std::vector<CUcontext> stackBefore, stackAfter;
    {
      wbt::OwnedContext own(wbt::device(0));  // pushed: current, above the primary context
      stackBefore = wbx::contextStack();
      ex09::preloadKernels(lib.get());
      stackAfter = wbx::contextStack();
      inOwn = loadedHere(lib);
      if (!wb::underSanitizer()) ownStamp = stampBesideGate(lib);
    }
    if (devices >= 2) {
      wbt::RetainedPrimary second(wbt::device(1));
      wbt::Pushed in(second.get());
      ex09::preloadKernels(lib.get());
      inSecond = loadedHere(lib);
    }
    CHECK_MESSAGE(stackAfter == stackBefore, "preloadKernels changed the caller's context stack");
    CHECK(inPrimary.notLoaded == 0);
    CHECK_MESSAGE(inOwn.notLoaded == 0,
                  "functions are not loaded in the caller's own context: did preloadKernels load into another "
                  "context, or skip a library it had seen before?");
    if (!wb::underSanitizer())
      CHECK_MESSAGE(ownStamp.whenStamped == wb::Gate::Waiting,
                    "in the caller's own context the stamp had to be loaded at its launch, and waited for the gate");
    CHECK_MESSAGE(inSecond.notLoaded == 0, "functions are not loaded in device 1's primary context");
  }

#if CUDA_VERSION >= 12040
  TEST_CASE("R4: a cuFuncLoad or cuKernelGetFunction that fails is thrown, not ignored, the first call or a later one") {
    wbt::RetainedPrimary primary(wbt::deviceKeepingPrimary(0));
    wbt::Pushed current(primary.get());
    struct Failing {
      const char* call;
      unsigned nth;  // streams.fatbin has three kernels: gate, stamp and burn
    };
    const Failing plan[] = {{"cuFuncLoad", 1}, {"cuFuncLoad", 3}, {"cuKernelGetFunction", 2}};
    for (const Failing& f : plan) {
      Library lib("streams.fatbin");  // afresh each time: nothing loaded in the context yet
      std::string outcome;
      bool fired = false;
      {
        wbx::FailCall fail(f.call, CUDA_ERROR_OUT_OF_MEMORY, f.nth);  // fails without reaching the driver
        outcome = outcomeOf([&] { ex09::preloadKernels(lib.get()); });
        fired = fail.fired();
      }
      const std::string call = f.call;
      CAPTURE(call);
      CAPTURE(f.nth);
      CAPTURE(outcome);
      if (!fired)
        MESSAGE("preloadKernels made fewer calls of " << call << ": that failure could not be shown");
      else
        CHECK_MESSAGE(outcome != "returned", "a driver call failed and preloadKernels returned as if every kernel were loaded");
    }
  }
#endif
}

EXERCISE("staging-ring", "A staging buffer reused only after the copy that reads it has run",
         "Constructor: refuse 0 with std::invalid_argument, then cuMemAllocHost and cuEventCreate per slot, freeing "
         "all made ones before rethrowing. tryUpload: if the slot at next_ has been used, cuEventQuery(slot.copied): "
         "CUDA_ERROR_NOT_READY means its copy has not run, so return false; CU_CHECK any other error. Otherwise "
         "memcpy src into slot.host, CU_CHECK(cuMemcpyHtoDAsync) from slot.host, then cuEventRecord(slot.copied, "
         "stream), and only then mark the slot used and advance next_. Destructor: cuEventSynchronize each used "
         "event, then cuEventDestroy and cuMemFreeHost.") {
  TEST_CASE("R1 R3 R5 R7 R11: two buffers: two uploads accepted and a third refused while the stream is held, one too large refused with std::invalid_argument, with nothing allocated; what arrives is what was passed, the refused upload is accepted once the stream has run, and the ring gives back all it held") {
    Lab lab;
    const size_t words = 16384, bytes = words * sizeof(unsigned);  // 64 KiB frames
    const std::vector<unsigned> frames[3] = {frame(0, words), frame(1, words), frame(2, words)};
    wbt::DeviceBuffer dst(3 * bytes);
    wbt::setBytes(dst.get(), 0, 3 * bytes);
    Stream s;
    const wbx::Holdings beforeRing = wbx::holdings();
    auto ring = std::make_unique<ex09::StagingRing>(2, bytes);
    bool accepted[3] = {false, false, false};
    wb::Gate::Outcome seen = wb::Gate::TimedOut;
    long allocated = 0;
    std::string heldMore, tooLargeWhenBusy;
    {
      wb::Gate gate(lab.k.gate, s.get(), 2.0);  // a ring that waits for a buffer waits 2 s at most
      const long madeBefore = allocationsMade();
      const wbx::Holdings beforeUploads = wbx::holdings();
      std::vector<unsigned> src;
      for (unsigned f = 0; f < 3; ++f) {
        src = frames[f];
        accepted[f] = ring->tryUpload(src.data(), bytes, dst.get() + f * bytes, s.get());
        std::fill(src.begin(), src.end(), 0xDEADBEEFu);  // the producer reuses its memory at once
      }
      // Too large is the caller's bug whether or not the buffer is free: refused as such, not "busy".
      const std::vector<unsigned> large(words + 1, 7u);
      tooLargeWhenBusy = outcomeOf([&] { ring->tryUpload(large.data(), bytes + 1, dst.get() + 2 * bytes, s.get()); });
      seen = gate.outcome();
      allocated = allocationsMade() - madeBefore;
      heldMore = wbx::holdings().differenceFrom(beforeUploads);
      gate.open();
      s.sync();
    }
    const std::vector<unsigned> afterRefusal = readBack<unsigned>(dst.get() + 2 * bytes, words);
    std::vector<unsigned> again = frames[2];
    const bool acceptedLater = ring->tryUpload(again.data(), bytes, dst.get() + 2 * bytes, s.get());
    s.sync();
    ring.reset();
    const std::string leftByRing = wbx::holdings().differenceFrom(beforeRing);

    CHECK_MESSAGE(seen == wb::Gate::Waiting, "tryUpload waited for the stream: it must return at once");
    CHECK(accepted[0]);
    CHECK(accepted[1]);
    CHECK_MESSAGE(!accepted[2], "the third upload was taken while both buffers' copies were still pending");
    CAPTURE(tooLargeWhenBusy);
    CHECK_MESSAGE(tooLargeWhenBusy == "std::invalid_argument",
                  "an upload larger than a buffer, made while the next buffer was busy, was not refused with "
                  "std::invalid_argument: check the size first, whatever the buffer's state");
    CAPTURE(allocated);
    CAPTURE(heldMore);
    CHECK_MESSAGE((allocated == 0 && heldMore == ""),
                  "tryUpload allocated pinned memory or events: the constructor makes them, once");
    CHECK_MESSAGE(readBack<unsigned>(dst.get(), words) == frames[0],
                  "the first frame arrived changed: its staging buffer was reused before its copy ran");
    CHECK(readBack<unsigned>(dst.get() + bytes, words) == frames[1]);
    CHECK_MESSAGE(std::all_of(afterRefusal.begin(), afterRefusal.end(), [](unsigned v) { return v == 0; }),
                  "the refused upload wrote to its destination");
    CHECK_MESSAGE(acceptedLater, "the upload was refused although the stream had run");
    CHECK(readBack<unsigned>(dst.get() + 2 * bytes, words) == frames[2]);
    CAPTURE(leftByRing);
    CHECK_MESSAGE(leftByRing == "", "the destroyed ring did not give back everything it held");
  }

  TEST_CASE("R5: a refused upload leaves the ring at its busy buffer: with the other buffer free, the next upload is refused too") {
    Lab lab;
    const size_t words = 1024, bytes = words * sizeof(unsigned);
    wbt::DeviceBuffer dst(5 * bytes);
    const std::vector<unsigned> src = frame(9, words);
    Stream idle, held;
    ex09::StagingRing ring(2, bytes);  // declared before the gate: destroyed after it has opened
    bool took[5] = {false, false, false, false, false};
    wb::Gate::Outcome seen = wb::Gate::TimedOut;
    {
      wb::Gate gate(lab.k.gate, held.get(), 2.0);
      took[0] = ring.tryUpload(src.data(), bytes, dst.get(), idle.get());            // buffer 0
      took[1] = ring.tryUpload(src.data(), bytes, dst.get() + bytes, held.get());    // buffer 1, held
      idle.sync();                                                                   // buffer 0's copy has run
      took[2] = ring.tryUpload(src.data(), bytes, dst.get() + 2 * bytes, idle.get());  // buffer 0 again
      idle.sync();
      took[3] = ring.tryUpload(src.data(), bytes, dst.get() + 3 * bytes, idle.get());  // buffer 1: busy
      took[4] = ring.tryUpload(src.data(), bytes, dst.get() + 4 * bytes, idle.get());  // still buffer 1: busy
      seen = gate.outcome();
      gate.open();
      held.sync();
    }
    idle.sync();
    REQUIRE_MESSAGE(seen == wb::Gate::Waiting, "tryUpload waited for the stream: it must return at once");
    REQUIRE((took[0] && took[1]));
    CHECK_MESSAGE(took[2], "a buffer whose copy had run was refused");
    CHECK_MESSAGE(!took[3], "an upload was taken while the ring's next buffer's copy was still pending");
    CHECK_MESSAGE(!took[4],
                  "after a refused upload the ring moved on to the other buffer: a refusal does nothing, and the "
                  "ring's next buffer is still the busy one");
  }

  TEST_CASE("R2 R3: a ring of 0 buffers or of 0 bytes, and an upload larger than a buffer, are refused with std::invalid_argument; an upload of exactly a buffer is taken") {
    Primary ctx;
    const std::string noBuffers = outcomeOf([] { ex09::StagingRing ring(0, 4096); });
    const std::string noBytes = outcomeOf([] { ex09::StagingRing ring(2, 0); });
    std::vector<unsigned char> src(4097, 1);
    wbt::DeviceBuffer dst(8192);
    Stream s;
    std::string tooLarge = "no ring", exact = "no ring";
    bool exactTaken = false;
    {
      ex09::StagingRing ring(2, 4096);
      tooLarge = outcomeOf([&] { ring.tryUpload(src.data(), src.size(), dst.get(), s.get()); });
      exact = outcomeOf([&] { exactTaken = ring.tryUpload(src.data(), 4096, dst.get(), s.get()); });
      s.sync();
    }
    CHECK(noBuffers == "std::invalid_argument");
    CHECK(noBytes == "std::invalid_argument");
    CHECK(tooLarge == "std::invalid_argument");
    CAPTURE(exact);
    CHECK_MESSAGE((exact == "returned" && exactTaken), "an upload of exactly bytesEach bytes was not taken");
  }

  TEST_CASE("R4: a constructor whose second event or second buffer cannot be made throws, and leaves nothing behind") {
    Primary ctx;
    struct Failing {
      const char* call;
      CUresult error;
    };
    const Failing plan[] = {{"cuEventCreate", CUDA_ERROR_OUT_OF_MEMORY}, {"cuMemAllocHost", CUDA_ERROR_OUT_OF_MEMORY}};
    for (const Failing& f : plan) {
      const std::string call = f.call;
      CAPTURE(call);
      const wbx::Holdings before = wbx::holdings();
      std::string outcome;
      bool fired = false;
      {
        wbx::FailCall fail(f.call, f.error, 2);  // fails without reaching the driver
        outcome = outcomeOf([] { ex09::StagingRing ring(3, 4096); });
        fired = fail.fired();
      }
      const std::string left = wbx::holdings().differenceFrom(before);
      CAPTURE(outcome);
      CAPTURE(left);
      REQUIRE_MESSAGE(fired, "the constructor of a ring of three made fewer than two: one buffer (cuMemAllocHost) and "
                             "one event per buffer, made there");
      CHECK_MESSAGE(outcome != "returned", "an allocation failed and the constructor went on");
      CHECK_MESSAGE(left == "", "the failed constructor left pinned memory or events behind");
    }
  }

  TEST_CASE("R6: a failing cuEventQuery is thrown, not taken for a busy buffer") {
    Primary ctx;
    const size_t words = 1024, bytes = words * sizeof(unsigned);
    wbt::DeviceBuffer dst(bytes);
    Stream s;
    ex09::StagingRing ring(2, bytes);
    const std::vector<unsigned> src = frame(7, words);
    const bool first = ring.tryUpload(src.data(), bytes, dst.get(), s.get());
    const bool second = ring.tryUpload(src.data(), bytes, dst.get(), s.get());
    s.sync();  // both buffers' copies have run: the next upload asks about the first buffer's event
    std::string outcome;
    bool fired = false;
    {
      // What a fault in the stream (lesson 10) makes every query return.
      wbx::FailCall fail("cuEventQuery", CUDA_ERROR_ILLEGAL_ADDRESS);
      outcome = outcomeOf([&] { ring.tryUpload(src.data(), bytes, dst.get(), s.get()); });
      fired = fail.fired();
    }
    s.sync();
    CAPTURE(outcome);
    REQUIRE(first);
    REQUIRE(second);
    REQUIRE_MESSAGE(fired, "tryUpload did not ask the event of a buffer that had been used (cuEventQuery)");
    CHECK_MESSAGE(outcome != "returned",
                  "cuEventQuery failed with CUDA_ERROR_ILLEGAL_ADDRESS and tryUpload returned: only "
                  "CUDA_ERROR_NOT_READY means busy");
  }

  TEST_CASE("R7 R9: a copy that cannot be enqueued is thrown without recording an event, and leaves the ring at its buffer: the next upload is taken while the other buffer is still held") {
    Lab lab;
    const size_t words = 1024, bytes = words * sizeof(unsigned);
    wbt::DeviceBuffer dst(3 * bytes);
    wbt::setBytes(dst.get(), 0, 3 * bytes);
    Stream s;
    ex09::StagingRing ring(2, bytes);  // declared before the gate: destroyed after it has opened
    const std::vector<unsigned> held = frame(6, words), lost = frame(3, words), a = frame(4, words),
                                b = frame(5, words);
    std::string outcome;
    bool fired = false, tookHeld = false, tookA = false;
    long recorded = 0;
    wb::Gate::Outcome seen = wb::Gate::TimedOut;
    {
      wb::Gate gate(lab.k.gate, s.get(), 2.0);
      tookHeld = ring.tryUpload(held.data(), bytes, dst.get(), s.get());  // buffer 0, its copy held by the gate
      {
        wbx::FailCall fail("cuMemcpyHtoDAsync", CUDA_ERROR_INVALID_VALUE);  // fails without reaching the driver
        const long recordsBefore = wbx::calls("cuEventRecord");
        outcome = outcomeOf([&] { ring.tryUpload(lost.data(), bytes, dst.get() + 2 * bytes, s.get()); });
        recorded = wbx::calls("cuEventRecord") - recordsBefore;
        fired = fail.fired();
      }
      tookA = ring.tryUpload(a.data(), bytes, dst.get() + bytes, s.get());  // buffer 1, still free
      seen = gate.outcome();
      gate.open();
      s.sync();
    }
    const bool tookB = ring.tryUpload(b.data(), bytes, dst.get() + 2 * bytes, s.get());  // buffer 0, its copy run
    s.sync();
    CAPTURE(outcome);
    CAPTURE(recorded);
    REQUIRE(tookHeld);
    REQUIRE_MESSAGE(fired, "tryUpload made no cuMemcpyHtoDAsync: the task asks for one");
    CHECK_MESSAGE(outcome != "returned", "the copy failed and tryUpload returned as if it had been enqueued");
    CHECK_MESSAGE(recorded == 0,
                  "an event was recorded although the copy never was: an event recorded before its copy completes "
                  "before the copy has run");
    CHECK_MESSAGE(seen == wb::Gate::Waiting, "tryUpload waited for the stream: it must return at once");
    CHECK_MESSAGE(tookA,
                  "after the failed upload the ring refused an upload with its next buffer free: the failed upload "
                  "moved the ring on to the busy buffer");
    CHECK_MESSAGE(tookB, "after the failed upload the ring refused an upload once the stream had run");
    CHECK(readBack<unsigned>(dst.get(), words) == held);
    CHECK(readBack<unsigned>(dst.get() + bytes, words) == a);
    CHECK(readBack<unsigned>(dst.get() + 2 * bytes, words) == b);
  }
}
