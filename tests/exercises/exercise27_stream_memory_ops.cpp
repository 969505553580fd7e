// The checks of lesson 27's exercises (lessons/27-stream-memory-ops/exercises.cpp). Whether a wait
// holds is read from pinned memory: the check queues a write of its own before the learner's
// operations (so it sees the stream reach them) and a stamp kernel or a write after them, and looks
// for 20 ms; whether it releases, for at most 2 s after the flag is set. Every flag is released by
// the check on every path (Release, and a watchdog thread where the learner's call itself could
// wait), so no check leaves the device waiting. Each case's name begins with the requirements it
// verifies.
#include "check.hpp"
#include "gate.hpp"
#include "27-stream-memory-ops/exercises.hpp"
#include "graph_handles.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

WBX_INTERPOSE(cuStreamWaitValue32, (CUstream s, CUdeviceptr a, cuuint32_t v, unsigned f), (s, a, v, f))
WBX_INTERPOSE(cuStreamWaitValue64, (CUstream s, CUdeviceptr a, cuuint64_t v, unsigned f), (s, a, v, f))
WBX_INTERPOSE(cuStreamWriteValue32, (CUstream s, CUdeviceptr a, cuuint32_t v, unsigned f), (s, a, v, f))
WBX_INTERPOSE(cuStreamWriteValue64, (CUstream s, CUdeviceptr a, cuuint64_t v, unsigned f), (s, a, v, f))
WBX_INTERPOSE(cuStreamBatchMemOp, (CUstream s, unsigned n, CUstreamBatchMemOpParams* p, unsigned f), (s, n, p, f))
WBX_INTERPOSE(cuGraphAddBatchMemOpNode,
              (CUgraphNode * node, CUgraph g, const CUgraphNode* deps, size_t n, const CUDA_BATCH_MEM_OP_NODE_PARAMS* p),
              (node, g, deps, n, p))

namespace {

using wbt::Graph;

using wbt::Stream;

// The primary context of device 0, current; the stamp kernel loaded; pinned words:
// [0] the flag, [1] "arrived", [2] the stamp's slot, [4..5] a 64-bit word.
struct Lab {
  wbt::RetainedPrimary primary{(wbt::initDriver(), wbt::device(0))};
  wbt::Pushed current{primary.get()};
  CUlibrary streams = nullptr;
  wb::StreamKernels k;
  wbt::DeviceBuffer counter{sizeof(unsigned)};
  wb::PinnedWords words{8};
  Lab() {
    CU_CHECK(cuLibraryLoadFromFile(&streams, wb::verifiedImagePath("streams.fatbin").c_str(), nullptr, nullptr, 0,
                                   nullptr, nullptr, 0));
    k = wb::StreamKernels::load(streams);
  }
  ~Lab() { cuLibraryUnload(streams); }
  void reset(unsigned flag) {
    words.write(0, flag);
    for (size_t i = 1; i < 8; ++i) words.write(i, 0);
  }
  void arrivedMark(CUstream s) { CU_CHECK(cuStreamWriteValue32(s, words.device(1), 1, 0)); }
  void stamp(CUstream s) {
    CUdeviceptr c = counter.get(), slot = words.device(2);
    void* args[] = {&c, &slot};
    CU_CHECK(cuLaunchKernel(k.stamp, 1, 1, 1, 1, 1, 1, 0, s, args, nullptr));
  }
  bool nonZeroWithin(size_t i, double ms) const {
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double, std::milli>(ms);
    while (words.read(i) == 0)
      if (std::chrono::steady_clock::now() > end) return false;
    return true;
  }
  unsigned long long read64() const { return static_cast<unsigned long long>(words.read(5)) << 32 | words.read(4); }
};

// Writes value to the flag when it leaves scope, then waits (bounded) for the stream: a wait the
// code under check queued is released on every path.
struct Release {
  Lab& lab;
  unsigned value;
  CUstream s;
  ~Release() {
    lab.words.write(0, value);
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (cuStreamQuery(s) == CUDA_ERROR_NOT_READY && std::chrono::steady_clock::now() < end) {
    }
  }
};

// A thread that writes value to the flag after 3 s unless disarmed first: the learner's call may
// itself wait for the flag (R3's mistake), and must not wait for ever.
class Watchdog {
 public:
  Watchdog(Lab& lab, unsigned value)
      : thread_([this, &lab, value] {
          std::unique_lock<std::mutex> lock(m_);
          if (!cv_.wait_for(lock, std::chrono::seconds(3), [this] { return disarmed_; })) {
            fired_ = true;
            lab.words.write(0, value);
          }
        }) {}
  ~Watchdog() { disarm(); }
  void disarm() {
    {
      std::lock_guard<std::mutex> lock(m_);
      disarmed_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }
  bool fired() const { return fired_; }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  bool disarmed_ = false;
  std::atomic<bool> fired_{false};
  std::thread thread_;
};

long hostWaits() {
  return wbx::calls("cuStreamSynchronize") + wbx::calls("cuStreamQuery") + wbx::calls("cuCtxSynchronize");
}

long singleOps() {
  return wbx::calls("cuStreamWaitValue32") + wbx::calls("cuStreamWaitValue64") + wbx::calls("cuStreamWriteValue32") +
         wbx::calls("cuStreamWriteValue64");
}

struct Seen {
  bool arrived = false, heldWhileBelow = false, ranAfter = false, blocked = false;
};

// The ticket-wait cycle: flag at `below`, the learner's wait for ticket, a stamp; then flag = after.
Seen ticketCycle(Lab& lab, unsigned below, unsigned ticket, unsigned after) {
  Stream s;
  lab.reset(below);
  Seen seen;
  Release release{lab, ticket, s.get()};
  lab.arrivedMark(s.get());
  {
    Watchdog watchdog(lab, ticket);  // a call that waits for the flag itself is released after 3 s
    ex27::holdUntil(s.get(), lab.words.device(0), ticket);
    watchdog.disarm();
    seen.blocked = watchdog.fired();
  }
  lab.stamp(s.get());
  seen.arrived = lab.nonZeroWithin(1, 2000);
  seen.heldWhileBelow = seen.arrived && !lab.nonZeroWithin(2, 20);
  lab.words.write(0, after);
  seen.ranAfter = lab.nonZeroWithin(2, 2000);
  return seen;
}

}  // namespace

EXERCISE("ticket-wait", "Hold a stream until a proxy's ticket comes",
         "CU_CHECK(cuStreamWaitValue32(stream, flag, ticket, CU_STREAM_WAIT_VALUE_GEQ)): GEQ is the cyclic "
         "comparison, and the call only enqueues.") {
  TEST_CASE("R1 R2 R3: the call returns before the flag is released; the kernel behind the wait is held while the flag is below the ticket (4 below 5, 2 below 6, 0xfffffffe below 3 across the wrap) and runs once the flag reaches the ticket") {
    Lab lab;
    struct Case {
      unsigned below, ticket;
    };
    for (const Case c : {Case{4, 5}, Case{2, 6}, Case{0xfffffffeu, 3}}) {
      CAPTURE(c.below);
      CAPTURE(c.ticket);
      const Seen seen = ticketCycle(lab, c.below, c.ticket, c.ticket);
      REQUIRE_MESSAGE(!seen.blocked, "the call returned only after the check released the flag 3 s later");
      REQUIRE_MESSAGE(seen.arrived, "the stream never reached the wait: queue it in the stream given");
      CHECK_MESSAGE(seen.heldWhileBelow, "the kernel ran while the flag was below the ticket (cyclic GEQ)");
      CHECK_MESSAGE(seen.ranAfter, "the kernel did not run once the flag reached the ticket");
    }
  }

  TEST_CASE("R2 R3: a flag that has gone past the ticket (the proxy skipped it) releases the kernel; the call returns before the flag is released") {
    Lab lab;
    const Seen seen = ticketCycle(lab, 4, 5, 9);
    REQUIRE_MESSAGE(!seen.blocked, "the call returned only after the check released the flag 3 s later");
    CHECK_MESSAGE(seen.ranAfter, "the flag read 9 with a ticket of 5 and the kernel still waited: use GEQ, not EQ");
  }

  TEST_CASE("R3: the call returns without waiting on the host for the stream or the flag") {
    Lab lab;
    Stream s;
    lab.reset(0);
    Release release{lab, 7, s.get()};
    Watchdog watchdog(lab, 7);
    const long before = hostWaits();
    ex27::holdUntil(s.get(), lab.words.device(0), 7);
    const long waits = hostWaits() - before;
    watchdog.disarm();
    CHECK_MESSAGE(!watchdog.fired(), "the call returned only after the check released the flag 3 s later");
    CHECK_MESSAGE(waits == 0, "the call waited on the host (cuStreamSynchronize, cuStreamQuery or cuCtxSynchronize)");
  }

  TEST_CASE("R4: a refused cuStreamWaitValue32 throws wb::DriverError") {
    Lab lab;
    Stream s;
    lab.reset(0);
    Release release{lab, 1, s.get()};
    wbx::FailCall fail("cuStreamWaitValue32", CUDA_ERROR_INVALID_VALUE);
    CHECK_THROWS_AS(ex27::holdUntil(s.get(), lab.words.device(0), 1), wb::DriverError);
  }
}

EXERCISE("batch-handoff", "Wait for one word and publish another in one call",
         "Two CUstreamBatchMemOpParams: [0] waitValue (CU_STREAM_MEM_OP_WAIT_VALUE_32, ready, readySeq, GEQ), [1] "
         "writeValue (CU_STREAM_MEM_OP_WRITE_VALUE_64, done, value64 = doneSeq); then "
         "CU_CHECK(cuStreamBatchMemOp(stream, 2, ops, 0)).") {
  constexpr unsigned long long kDone = (1ull << 40) + 5;
  TEST_CASE("R1 R2 R3: done is unchanged while ready is below readySeq, reads all 64 bits of doneSeq once it is reached, and one cuStreamBatchMemOp made it") {
    Lab lab;
    if (!wbt::attribute(wbt::device(0), CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS))
      throw wbx::Skipped("CAN_USE_64_BIT_STREAM_MEM_OPS is 0 on device 0");
    Stream s;
    lab.reset(10);
    bool arrived = false, held = false, published = false;
    long batches = 0, singles = 0;
    {
      Release release{lab, 11, s.get()};
      lab.arrivedMark(s.get());
      const long b0 = wbx::calls("cuStreamBatchMemOp"), s0 = singleOps();
      {
        Watchdog watchdog(lab, 11);  // a call that waits for ready itself is released after 3 s
        ex27::handoff(s.get(), lab.words.device(0), 11, lab.words.device(4), kDone);
        watchdog.disarm();
        REQUIRE_MESSAGE(!watchdog.fired(), "the call returned only after the check set ready 3 s later");
      }
      batches = wbx::calls("cuStreamBatchMemOp") - b0;
      singles = singleOps() - s0;
      arrived = lab.nonZeroWithin(1, 2000);
      held = arrived && !lab.nonZeroWithin(4, 20) && lab.words.read(5) == 0;
      lab.words.write(0, 11);
      const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(2);
      while (lab.read64() == 0 && std::chrono::steady_clock::now() < end) {
      }
      published = lab.read64() == kDone;
    }
    REQUIRE_MESSAGE(arrived, "the stream never reached your operations: queue them in the stream given");
    CHECK_MESSAGE(held, "R1: done changed while ready was below readySeq: the wait goes first in the array");
    CHECK_MESSAGE(published, "R2: done reads " << lab.read64() << ", not 2^40 + 5: write all 64 bits");
    CHECK_MESSAGE((batches == 1 && singles == 0), "R3: " << batches << " cuStreamBatchMemOp call(s) and " << singles
                                                         << " single operation(s); one batch is asked for");
  }

  TEST_CASE("R4: a refused cuStreamBatchMemOp throws wb::DriverError") {
    Lab lab;
    Stream s;
    lab.reset(0);
    Release release{lab, 1, s.get()};
    wbx::FailCall fail("cuStreamBatchMemOp", CUDA_ERROR_INVALID_VALUE);
    CHECK_THROWS_AS(ex27::handoff(s.get(), lab.words.device(0), 1, lab.words.device(4), kDone), wb::DriverError);
  }
}

namespace {


CUgraphNode emptyNode(CUgraph g) {
  CUgraphNode n = nullptr;
  CU_CHECK(cuGraphAddEmptyNode(&n, g, nullptr, 0));
  return n;
}

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
  deps.resize(n);
  return deps;
}

}  // namespace

EXERCISE("wait-node", "A graph node that waits for a flag",
         "One CUstreamBatchMemOpParams (waitValue: CU_STREAM_MEM_OP_WAIT_VALUE_32, flag, value, GEQ) in a "
         "CUDA_BATCH_MEM_OP_NODE_PARAMS with ctx, count = 1 and paramArray pointing at it; then "
         "CU_CHECK(cuGraphAddBatchMemOpNode(&node, graph, deps, count, &params)).") {
  TEST_CASE("R1: a kernel node after it does not run while the flag is below the value, and runs once the flag has gone past it") {
    Lab lab;
    Graph g;
    CU_CHECK(cuGraphCreate(&g.g, 0));
    lab.reset(3);
    const CUgraphNode wait = ex27::addWaitNode(g.g, lab.primary.get(), nullptr, 0, lab.words.device(0), 4);
    REQUIRE(wait != nullptr);
    CUdeviceptr c = lab.counter.get(), slot = lab.words.device(2);
    void* args[] = {&c, &slot};
    CUDA_KERNEL_NODE_PARAMS kp{};
    CU_CHECK(cuKernelGetFunction(&kp.func, reinterpret_cast<CUkernel>(lab.k.stamp)));
    kp.gridDimX = kp.gridDimY = kp.gridDimZ = kp.blockDimX = kp.blockDimY = kp.blockDimZ = 1;
    kp.kernelParams = args;
    CUgraphNode kernel = nullptr;
    CU_CHECK(cuGraphAddKernelNode(&kernel, g.g, &wait, 1, &kp));
    CUgraphExec exec = nullptr;
    CU_CHECK(cuGraphInstantiate(&exec, g.g, 0));
    Stream s;
    bool held = false, ran = false;
    {
      Release release{lab, 4, s.get()};
      CU_CHECK(cuGraphLaunch(exec, s.get()));
      held = !lab.nonZeroWithin(2, 20);
      lab.words.write(0, 7);
      ran = lab.nonZeroWithin(2, 2000);
    }
    cuGraphExecDestroy(exec);
    CHECK_MESSAGE(held, "the kernel node ran while the flag (3) was below the value (4)");
    CHECK_MESSAGE(ran, "the flag read 7, past the value 4, and the kernel node still waited: use GEQ");
  }

  TEST_CASE("R2 R3: the node depends on exactly the nodes given (two, then none) and is a batch mem-op node of the context given (one that is not current)") {
    Lab lab;
    // A second context, not current: the node must be of the one given, not of the caller's current one.
    wbt::OwnedContext other(wbt::device(0));
    CUcontext popped = nullptr;
    CU_CHECK(cuCtxPopCurrent(&popped));
    Graph g;
    CU_CHECK(cuGraphCreate(&g.g, 0));
    lab.reset(1);
    const CUgraphNode a = emptyNode(g.g), b = emptyNode(g.g);
    const CUgraphNode deps[2] = {a, b};
    const CUgraphNode after = ex27::addWaitNode(g.g, other.get(), deps, 2, lab.words.device(0), 1);
    const CUgraphNode root = ex27::addWaitNode(g.g, other.get(), nullptr, 0, lab.words.device(0), 1);
    REQUIRE((after != nullptr && root != nullptr));
    const std::vector<CUgraphNode> d = dependenciesOf(after);
    CHECK_MESSAGE((d.size() == 2 && ((d[0] == a && d[1] == b) || (d[0] == b && d[1] == a))),
                  "R2: the node depends on " << d.size() << " node(s), not on the two given");
    CHECK_MESSAGE(dependenciesOf(root).empty(), "R2: with count 0 the node has dependencies");
    CUgraphNodeType type{};
    CU_CHECK(cuGraphNodeGetType(after, &type));
    CHECK_MESSAGE(type == CU_GRAPH_NODE_TYPE_BATCH_MEM_OP, "R3: the node is not a batch mem-op node");
    CUDA_BATCH_MEM_OP_NODE_PARAMS p{};
    CU_CHECK(cuGraphBatchMemOpNodeGetParams(after, &p));
    CHECK_MESSAGE(p.ctx == other.get(), "R3: the node's context is not the one given");
  }

  TEST_CASE("R4: a refused cuGraphAddBatchMemOpNode throws wb::DriverError") {
    Lab lab;
    Graph g;
    CU_CHECK(cuGraphCreate(&g.g, 0));
    wbx::FailCall fail("cuGraphAddBatchMemOpNode", CUDA_ERROR_INVALID_VALUE);
    CHECK_THROWS_AS(ex27::addWaitNode(g.g, lab.primary.get(), nullptr, 0, lab.words.device(0), 1), wb::DriverError);
  }
}
