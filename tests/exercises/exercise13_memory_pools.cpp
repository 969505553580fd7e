// The checks of lesson 13's exercises (lessons/13-memory-pools/exercises.cpp). Pending work comes
// from the gate kernel of lesson 09: nothing sleeps, and every gate gives up at its deadline. The
// code under check runs in a context the check created, so work put into a primary context instead
// shows; the ledger (ledger.hpp) says what it left held, and fails the driver call a case names.
#include "check.hpp"
#include "gate.hpp"
#include "13-memory-pools/exercises.hpp"

#include <cstdint>
#include <exception>
#include <initializer_list>
#include <string>
#include <vector>

// Calls the ledger does not stand before, counted here: making a pool current changes it for the
// whole process, and an event may be recorded either way.
WBX_INTERPOSE(cuDeviceSetMemPool, (CUdevice dev, CUmemoryPool pool), (dev, pool))
#if CUDA_VERSION >= 13000
WBX_INTERPOSE(cuMemSetMemPool, (CUmemLocation * location, CUmemAllocationType type, CUmemoryPool pool),
              (location, type, pool))
#endif
WBX_INTERPOSE(cuMemPoolSetAttribute, (CUmemoryPool pool, CUmemPool_attribute attr, void* value), (pool, attr, value))
WBX_INTERPOSE(cuEventRecordWithFlags, (CUevent e, CUstream s, unsigned flags), (e, s, flags))

namespace {

// A context of the check's own on device 0, current for the test.
struct Ctx {
  CUdevice dev = (wbt::initDriver(), wbt::device(0));
  wbt::OwnedContext ctx{dev};
};

// The same, with the gate, stamp and burn kernels loaded into it (before any gate closes).
struct Lab : Ctx {
  CUlibrary library = nullptr;
  wb::StreamKernels k;
  Lab() {
    CU_CHECK(cuLibraryLoadFromFile(&library, wb::verifiedImagePath("streams.fatbin").c_str(), nullptr, nullptr, 0,
                                   nullptr, nullptr, 0));
    k = wb::StreamKernels::load(library);
  }
  ~Lab() { cuLibraryUnload(library); }
};

// A pool destroyed at scope exit: made here, or adopted from the learner (never the default pool).
class Pool {
 public:
  explicit Pool(CUdevice dev) {
    CUmemPoolProps props{};
    props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    props.handleTypes = CU_MEM_HANDLE_TYPE_NONE;
    props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    props.location.id = dev;
    CU_CHECK(cuMemPoolCreate(&pool_, &props));
  }
  Pool(CUmemoryPool adopted, CUmemoryPool byDefault) : pool_(adopted == byDefault ? nullptr : adopted) {}
  ~Pool() {
    if (pool_) cuMemPoolDestroy(pool_);
  }
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;
  CUmemoryPool get() const { return pool_; }
  cuuint64_t stat(CUmemPool_attribute what) const {
    cuuint64_t value = 0;
    CU_CHECK(cuMemPoolGetAttribute(pool_, what, &value));
    return value;
  }

 private:
  CUmemoryPool pool_ = nullptr;
};

using wbt::Stream;

CUmemoryPool currentPool(CUdevice dev) {
  CUmemoryPool pool = nullptr;
  CU_CHECK(cuDeviceGetMemPool(&pool, dev));
  return pool;
}

CUmemoryPool defaultPool(CUdevice dev) {
  CUmemoryPool pool = nullptr;
  CU_CHECK(cuDeviceGetDefaultMemPool(&pool, dev));
  return pool;
}

// The pool an allocation came from (ask once the stream has made it).
CUmemoryPool poolOf(CUdeviceptr p) {
  CUmemoryPool owner = nullptr;
  CU_CHECK(cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, p));
  return owner;
}

// Every call that makes a pool a device's current pool.
long setPoolCalls() { return wbx::calls("cuDeviceSetMemPool") + wbx::calls("cuMemSetMemPool"); }

std::vector<unsigned char> bytePattern(size_t n, unsigned seed) {
  std::vector<unsigned char> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<unsigned char>(wbt::patternAt(seed, i) >> 13);
  return v;
}

std::vector<unsigned char> download(CUdeviceptr p, size_t n) {
  std::vector<unsigned char> out(n);
  CU_CHECK(cuMemcpyDtoH(out.data(), p, n));
  return out;
}

// A pointer from the stream-ordered allocator, freed in a stream at scope exit unless handed on.
struct FreedAtExit {
  CUstream s;
  CUdeviceptr p = 0;
  ~FreedAtExit() {
    if (p) cuMemFreeAsync(p, s);
  }
};

void launchStamp(const Lab& lab, wb::PinnedWords& words, size_t slot, CUstream s) {
  CUdeviceptr counter = words.device(0), where = words.device(slot);
  void* args[] = {&counter, &where};
  CU_CHECK(cuLaunchKernel(lab.k.stamp, 1, 1, 1, 1, 1, 1, 0, s, args, nullptr));
}

// Whether a stamp kernel wrote its slot within ms milliseconds, read from pinned memory (no CUDA
// call, so nothing here waits for a stream). Only work that something holds back takes longer
// than microseconds to run on an idle GPU.
bool stampedWithin(const wb::PinnedWords& words, size_t slot, double ms) {
  const wb::Stopwatch clock;
  while (words.read(slot) == 0)
    if (clock.ms() > ms) return false;
  return true;
}

// What a call did when the nth call of one driver entry point failed.
struct Failed {
  bool fired = false, threw = false;
};

// Runs call with the nth call of function failing. wb::NotDone goes on (the exercise is not done).
template <typename Call>
Failed withFailing(const char* function, unsigned nth, Call&& call) {
  wbx::FailCall fail(function, CUDA_ERROR_INVALID_VALUE, nth);
  Failed f;
  try {
    call();
  } catch (const wb::NotDone&) {
    throw;
  } catch (const std::exception&) {
    f.threw = true;
  }
  f.fired = fail.fired();
  return f;
}

// The nodes of a graph, their types and what each depends on.
struct GraphShape {
  std::vector<CUgraphNode> nodes;
  explicit GraphShape(CUgraph graph) {
    size_t n = 0;
    CU_CHECK(cuGraphGetNodes(graph, nullptr, &n));
    nodes.resize(n);
    if (n) CU_CHECK(cuGraphGetNodes(graph, nodes.data(), &n));
  }
  std::vector<CUgraphNode> ofType(CUgraphNodeType type) const {
    std::vector<CUgraphNode> out;
    for (CUgraphNode node : nodes) {
      CUgraphNodeType t{};
      CU_CHECK(cuGraphNodeGetType(node, &t));
      if (t == type) out.push_back(node);
    }
    return out;
  }
  static std::vector<CUgraphNode> dependencies(CUgraphNode node) {
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
  // Whether later runs after earlier: earlier is among later's dependencies, or theirs.
  static bool after(CUgraphNode later, CUgraphNode earlier) {
    std::vector<CUgraphNode> todo = dependencies(later), seen;
    while (!todo.empty()) {
      const CUgraphNode node = todo.back();
      todo.pop_back();
      if (node == earlier) return true;
      bool known = false;
      for (CUgraphNode s : seen) known = known || s == node;
      if (known) continue;
      seen.push_back(node);
      for (CUgraphNode d : dependencies(node)) todo.push_back(d);
    }
    return false;
  }
};

}  // namespace

EXERCISE("scratch-per-request", "A stream-ordered scratch buffer per request that never blocks the host",
         "cuMemAllocFromPoolAsync(&scratch, bytes, pool, stream), cuMemcpyDtoDAsync in and out, then "
         "cuMemFreeAsync(scratch, stream), last: every call only enqueues into stream. Do not synchronise, do not "
         "cuMemFree, and take from the pool you are given: not cuMemAllocAsync, and no cuDeviceSetMemPool. Where a "
         "copy fails, cuMemFreeAsync the scratch buffer before you throw.") {
  TEST_CASE("R1 R2 R3 R4 R5 R6: serveRequest returns before its stream has run, the output is the input, the scratch buffer came from the pool and went back, and nothing else changed") {
    Lab lab;
    Pool pool(lab.dev);
    const size_t bytes = (4u << 20) + 3;  // not a whole number of words
    const std::vector<unsigned char> pattern = bytePattern(bytes, 1);
    wbt::DeviceBuffer input(bytes), output(bytes);
    CU_CHECK(cuMemcpyHtoD(input.get(), pattern.data(), bytes));
    wbt::setBytes(output.get(), 0, bytes);
    Stream s;
    const CUmemoryPool currentBefore = currentPool(lab.dev);
    const std::vector<CUcontext> stackBefore = wbx::contextStack();
    const long setBefore = setPoolCalls(), freesBefore = wbx::calls("cuMemFree");
    const wbx::Holdings before = wbx::holdings();
    wb::Gate::Outcome seen = wb::Gate::TimedOut;
    {
      wb::Gate gate(lab.k.gate, s.get(), 2.0);  // a learner who waits for the stream waits 2 s at most
      ex13::serveRequest(pool.get(), s.get(), input.get(), output.get(), bytes);
      seen = gate.outcome();
      gate.open();
      s.sync();
    }
    const std::string left = wbx::holdings().differenceFrom(before);
    CHECK_MESSAGE(seen == wb::Gate::Waiting, "serveRequest waited for the stream: it must only enqueue");
    CHECK_MESSAGE(download(output.get(), bytes) == pattern, "output does not hold input");
    CHECK_MESSAGE(pool.stat(CU_MEMPOOL_ATTR_USED_MEM_HIGH) >= bytes,
                  "the scratch buffer did not come from the pool given (cuMemAllocAsync takes the current pool)");
    CHECK_MESSAGE(pool.stat(CU_MEMPOOL_ATTR_USED_MEM_CURRENT) == 0, "the scratch buffer was not given back");
    CHECK_MESSAGE(currentPool(lab.dev) == currentBefore, "the device's current pool changed: that is the whole process's");
    CHECK_MESSAGE(setPoolCalls() == setBefore, "a pool was made current (cuDeviceSetMemPool): name the pool instead");
    CHECK_MESSAGE(wbx::calls("cuMemFree") == freesBefore,
                  "cuMemFree frees at once, while the stream may still use the buffer: cuMemFreeAsync in stream");
    CAPTURE(left);
    CHECK_MESSAGE(left.empty(), "serveRequest left something held once its stream had run");
    CHECK_MESSAGE(wbx::contextStack() == stackBefore, "the context stack changed");
  }

  // Stream capture records what was put into the stream, and after what: the order itself, which
  // no timing could show (a free before the last copy works by luck, in one stream).
  TEST_CASE("R1 R3: captured into a graph, serveRequest's stream holds the allocation, then the copies, then the free") {
    Ctx ctx;
    Pool pool(ctx.dev);
    const size_t bytes = 1u << 20;
    wbt::DeviceBuffer input(bytes), output(bytes);
    Stream s;  // ends a capture an exception left open
    CU_CHECK(cuStreamBeginCapture(s.get(), CU_STREAM_CAPTURE_MODE_GLOBAL));
    ex13::serveRequest(pool.get(), s.get(), input.get(), output.get(), bytes);
    CUgraph graph = nullptr;
    const CUresult ended = cuStreamEndCapture(s.get(), &graph);
    struct Owned {
      CUgraph g;
      ~Owned() {
        if (g) cuGraphDestroy(g);
      }
    } owned{graph};
    REQUIRE_MESSAGE(ended == CUDA_SUCCESS, "the capture of stream failed: serveRequest did something a stream cannot hold");
    const GraphShape shape(graph);
    const std::vector<CUgraphNode> allocs = shape.ofType(CU_GRAPH_NODE_TYPE_MEM_ALLOC),
                                   frees = shape.ofType(CU_GRAPH_NODE_TYPE_MEM_FREE),
                                   copies = shape.ofType(CU_GRAPH_NODE_TYPE_MEMCPY);
    REQUIRE_MESSAGE(allocs.size() == 1, "stream does not hold one allocation: allocate the scratch buffer in stream");
    REQUIRE_MESSAGE(frees.size() == 1, "stream does not hold one free: cuMemFreeAsync the scratch buffer in stream");
    CUDA_MEM_ALLOC_NODE_PARAMS allocated{};
    CU_CHECK(cuGraphMemAllocNodeGetParams(allocs[0], &allocated));
    CUdeviceptr freed = 0;
    CU_CHECK(cuGraphMemFreeNodeGetParams(frees[0], &freed));
    CHECK_MESSAGE(freed == allocated.dptr, "the free in stream is not the scratch buffer's");
    CHECK(allocated.bytesize >= bytes);
    CHECK_MESSAGE(copies.size() >= 2, "stream does not hold both copies");
    for (CUgraphNode copy : copies) {
      CHECK_MESSAGE(GraphShape::after(copy, allocs[0]), "a copy comes before the allocation in stream");
      CHECK_MESSAGE(GraphShape::after(frees[0], copy), "the free comes before a copy in stream: free after the last use");
    }
  }

  TEST_CASE("R6 R7: when a copy cannot be enqueued, serveRequest throws, the scratch buffer still goes back to the pool, and the context stack is as it was") {
    Ctx ctx;
    const std::vector<CUcontext> stackBefore = wbx::contextStack();
    Pool pool(ctx.dev);
    const size_t bytes = 1u << 20;
    wbt::DeviceBuffer input(bytes), output(bytes);
    Stream s;
    int failures = 0;
    for (const char* copy : {"cuMemcpyDtoDAsync", "cuMemcpyAsync"}) {
      for (unsigned nth : {1u, 2u}) {  // the copy in, the copy out
        const wbx::Holdings before = wbx::holdings();
        const Failed f = withFailing(copy, nth, [&] {
          ex13::serveRequest(pool.get(), s.get(), input.get(), output.get(), bytes);
        });
        s.sync();
        if (!f.fired) continue;  // the other copy call, or one copy of this kind only
        ++failures;
        CAPTURE(copy);
        CAPTURE(nth);
        const std::string left = wbx::holdings().differenceFrom(before);
        CAPTURE(left);
        CHECK_MESSAGE(f.threw, "serveRequest did not throw when a copy failed");
        CHECK_MESSAGE(pool.stat(CU_MEMPOOL_ATTR_USED_MEM_CURRENT) == 0,
                      "the scratch buffer stayed allocated after a copy failed: cuMemFreeAsync it before you throw");
        CHECK(left.empty());
        CHECK_MESSAGE(wbx::contextStack() == stackBefore, "a serveRequest that threw left the context stack changed");
      }
    }
    CHECK_MESSAGE(failures > 0, "serveRequest called neither cuMemcpyDtoDAsync nor cuMemcpyAsync");
  }
}

EXERCISE("steady-pool", "A pool whose reserved memory stays flat across iterations",
         "cuMemPoolCreate with CUmemPoolProps{} set to CU_MEM_ALLOCATION_TYPE_PINNED on CU_MEM_LOCATION_TYPE_DEVICE "
         "dev (maxSize 0: no cap), then cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &value) with a "
         "cuuint64_t value of workingSetBytes. Not 0, not UINT64_MAX; no cuDeviceSetMemPool; and cuMemPoolDestroy "
         "the pool if the attribute cannot be set.") {
  TEST_CASE("R1 R2 R3 R4: a new pool whose threshold is the working set: five steps of the working set leave the same reserve, a burst of twice as much is served, the current pool is untouched; and a working set past 32 bits is the threshold too") {
    Ctx ctx;
    const size_t workingSet = 32u << 20;
    const CUmemoryPool byDefault = defaultPool(ctx.dev), currentBefore = currentPool(ctx.dev);
    const long setBefore = setPoolCalls();
    const wbx::Holdings before = wbx::holdings();
    const CUmemoryPool made = ex13::createSteadyPool(ctx.dev, workingSet);
    const std::string took = wbx::holdings().differenceFrom(before);
    Pool pool(made, byDefault);
    REQUIRE_MESSAGE(made != nullptr, "no pool returned");
    REQUIRE_MESSAGE(made != byDefault, "the device's default pool: make a new one, the default is the whole process's");
    CAPTURE(took);
    CHECK_MESSAGE(took == "1 memory pool more", "createSteadyPool should make one pool and hold nothing else");
    CHECK_MESSAGE(currentPool(ctx.dev) == currentBefore, "the device's current pool changed: that is the whole process's");
    CHECK_MESSAGE(setPoolCalls() == setBefore, "a pool was made current (cuDeviceSetMemPool)");
    const cuuint64_t threshold = pool.stat(CU_MEMPOOL_ATTR_RELEASE_THRESHOLD);
    CAPTURE(threshold);
    CHECK_MESSAGE(threshold == workingSet, "the release threshold is not the working set");
    Stream s;
    const auto step = [&](size_t bytes) {
      CUdeviceptr p = 0;
      const CUresult rc = cuMemAllocFromPoolAsync(&p, bytes, pool.get(), s.get());
      if (rc == CUDA_SUCCESS) {
        CU_CHECK(cuMemsetD8Async(p, 1, bytes, s.get()));
        CU_CHECK(cuMemFreeAsync(p, s.get()));
      }
      s.sync();
      return rc;
    };
    std::vector<cuuint64_t> reserved;
    std::string seen;  // what each step left reserved, for the failure message
    for (int i = 0; i < 5; ++i) {
      CU_CHECK(step(workingSet));
      reserved.push_back(pool.stat(CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT));
      seen += (seen.empty() ? "" : ", ") + wb::bytes(static_cast<size_t>(reserved.back()));
    }
    CAPTURE(seen);
    CHECK_MESSAGE(reserved[0] >= workingSet, "the working set was given back at the synchronisation");
    bool flat = true;
    for (cuuint64_t r : reserved) flat = flat && r == reserved[0];
    CHECK_MESSAGE(flat, "the reserve changed from one step to the next");
    const CUresult burst = step(2 * workingSet);
    // Not asserted: the reference says only that the pool "will try to release" beyond the threshold.
    const std::string afterBurst = wb::bytes(static_cast<size_t>(pool.stat(CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT)));
    CAPTURE(afterBurst);
    CHECK_MESSAGE(burst == CUDA_SUCCESS, "a burst of twice the working set was refused: do not cap the pool");

    // The attribute is a cuuint64_t: a working set past 32 bits keeps its high bits. Nothing is
    // allocated from this pool, so the device need not have the room.
    const size_t large = (size_t{5} << 30) + 4096;
    Pool big(ex13::createSteadyPool(ctx.dev, large), byDefault);
    REQUIRE(big.get() != nullptr);
    const cuuint64_t largeThreshold = big.stat(CU_MEMPOOL_ATTR_RELEASE_THRESHOLD);
    CAPTURE(largeThreshold);
    CHECK_MESSAGE(largeThreshold == large, "the release threshold of a working set of 5 GiB + 4 KiB is not that");
  }

  // The device is dev, not device 0 and not the current context's: asked for device 1 while
  // device 0's context is current.
  TEST_CASE("R1 R2: a pool for device 1, made while device 0's context is current, has its threshold and serves device 1's memory") {
    wbx::needDevices(2);  // one GPU: this case reports itself skipped, the rest still count
    Ctx ctx;
    const size_t workingSet = 32u << 20;
    const CUdevice dev1 = wbt::device(1);
    const CUmemoryPool made1 = ex13::createSteadyPool(dev1, workingSet);
    Pool pool1(made1, defaultPool(dev1));
    REQUIRE(pool1.get() != nullptr);
    CHECK(pool1.stat(CU_MEMPOOL_ATTR_RELEASE_THRESHOLD) == workingSet);
    wbt::RetainedPrimary primary1(dev1);
    wbt::Pushed onDevice1(primary1.get());
    Stream s1;
    CUdeviceptr p = 0;
    const CUresult rc = cuMemAllocFromPoolAsync(&p, 1u << 20, pool1.get(), s1.get());
    s1.sync();
    int ordinal = -1;
    if (rc == CUDA_SUCCESS) {
      CU_CHECK(cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, p));
      CU_CHECK(cuMemFreeAsync(p, s1.get()));
      s1.sync();
    }
    CAPTURE(rc);
    CHECK_MESSAGE(ordinal == 1, "the pool made for device 1 does not serve device 1's memory");
  }

  TEST_CASE("R5: when the release threshold cannot be set, createSteadyPool throws and leaves no pool") {
    Ctx ctx;
    const CUmemoryPool byDefault = defaultPool(ctx.dev);
    const wbx::Holdings before = wbx::holdings();
    CUmemoryPool made = nullptr;
    const Failed f = withFailing("cuMemPoolSetAttribute", 1, [&] { made = ex13::createSteadyPool(ctx.dev, 32u << 20); });
    Pool owned(made, byDefault);  // destroyed, should one have come back
    const std::string left = wbx::holdings().differenceFrom(before);
    CHECK_MESSAGE(f.fired, "the release threshold was not set with cuMemPoolSetAttribute");
    CHECK_MESSAGE(f.threw, "createSteadyPool did not throw when the threshold could not be set");
    CAPTURE(left);
    CHECK_MESSAGE(left.empty(), "a pool was left behind: cuMemPoolDestroy it before you throw");
  }
}

EXERCISE("event-handover", "Safe cross-stream reuse ordered by an event",
         "cuMemFreeAsync(used, producer); cuEventCreate; cuEventRecord(event, producer); cuStreamWaitEvent(consumer, "
         "event, 0); then cuMemAllocFromPoolAsync(&block, bytes, pool, consumer); cuEventDestroy (the wait is already "
         "enqueued). In that order: the record after the free, the allocation after the wait. Never synchronise the "
         "producer, and destroy the event on every path.") {
  TEST_CASE("R1 R2 R3 R4 R5 R7: handOver does not wait, the consumer's later work waits for the producer's, the block comes from the pool, and nothing is left behind") {
    Lab lab;
    const size_t bytes = 32u << 20;
    Pool pool(lab.dev);
    wb::PinnedWords words(3);  // [0] the stamp counter, [1] the consumer's stamp, [2] the producer's
    Stream producer, consumer;
    FreedAtExit handed{consumer.get()};
    FreedAtExit used{producer.get()};
    const CUmemoryPool currentBefore = currentPool(lab.dev);
    const std::vector<CUcontext> stackBefore = wbx::contextStack();
    bool returnedAtOnce = false, consumerRanEarly = false, gateHeld = false;
    std::string left;
    CUdeviceptr freed = 0;
    {
      wb::Gate gate(lab.k.gate, producer.get(), 2.0);  // the producer's work is still running...
      CU_CHECK(cuMemAllocFromPoolAsync(&used.p, bytes, pool.get(), producer.get()));
      launchStamp(lab, words, 2, producer.get());  // ...and its last step, which stamps, comes before the free
      const wbx::Holdings before = wbx::holdings();
      freed = used.p;
      handed.p = ex13::handOver(pool.get(), freed, bytes, producer.get(), consumer.get());
      used.p = 0;  // handOver freed it
      returnedAtOnce = gate.outcome() == wb::Gate::Waiting;
      left = wbx::holdings().differenceFrom(before);  // used went, the block came: nothing else
      launchStamp(lab, words, 1, consumer.get());
      consumerRanEarly = stampedWithin(words, 1, 200);
      gateHeld = gate.outcome() == wb::Gate::Waiting;
      gate.open();
      producer.sync();
      consumer.sync();
    }
    CHECK_MESSAGE(returnedAtOnce, "handOver waited for the producer: order the streams with an event instead");
    CHECK_MESSAGE(!consumerRanEarly, "the consumer's work ran while the producer was held: the consumer did not wait for it");
    CHECK(gateHeld);
    const unsigned consumerStamp = words.read(1), producerStamp = words.read(2);
    CAPTURE(consumerStamp);
    CAPTURE(producerStamp);
    CHECK_MESSAGE(consumerStamp > producerStamp, "the consumer's work ran before the producer's last step");
    REQUIRE(handed.p != 0);
    CHECK_MESSAGE(poolOf(handed.p) == pool.get(), "the block did not come from pool (cuMemAllocAsync takes the current pool)");
    const bool sameBlock = handed.p == freed;  // the driver's choice: reported, not required
    CAPTURE(sameBlock);
    CAPTURE(left);
    CHECK_MESSAGE(left.empty(), "handOver left something held (an event?)");
    CHECK_MESSAGE(currentPool(lab.dev) == currentBefore, "the device's current pool changed");
    CHECK_MESSAGE(wbx::contextStack() == stackBefore, "the context stack changed");
  }

  // A failure in the middle says what had happened before it: whether used was already freed when
  // the record failed, and whether the consumer already waited when its allocation failed.
  TEST_CASE("R1 R3 R5 R6 R7: when the record, the wait or the allocation fails, handOver throws, leaves no event and the context stack as it was, and had freed used before recording and waited before allocating") {
    Ctx ctx;
    const std::vector<CUcontext> stackBefore = wbx::contextStack();
    const size_t bytes = 4u << 20;
    Pool pool(ctx.dev);
    Stream producer, consumer;
    // One handOver with the first call of function failing: what it left held (measured before the
    // check gives back what is still its own), and how often it made a stream wait.
    const auto attempt = [&](const char* function, Failed& f, long& waits) {
      CUdeviceptr used = 0, got = 0;
      CU_CHECK(cuMemAllocFromPoolAsync(&used, bytes, pool.get(), producer.get()));
      const wbx::Holdings before = wbx::holdings();
      const long waitsBefore = wbx::calls("cuStreamWaitEvent");
      f = withFailing(function, 1, [&] { got = ex13::handOver(pool.get(), used, bytes, producer.get(), consumer.get()); });
      waits = wbx::calls("cuStreamWaitEvent") - waitsBefore;
      const std::string left = wbx::holdings().differenceFrom(before);
      const long held = wbx::holdings()[wbx::Held::DeviceMemory] - (got ? 1 : 0);
      if (held == before[wbx::Held::DeviceMemory]) CU_CHECK(cuMemFreeAsync(used, producer.get()));  // still ours
      if (got) CU_CHECK(cuMemFreeAsync(got, consumer.get()));
      producer.sync();
      consumer.sync();
      return left;
    };
    Failed record;
    long waits = 0;
    std::string left;
    for (const char* recordCall : {"cuEventRecord", "cuEventRecordWithFlags"}) {
      left = attempt(recordCall, record, waits);
      if (record.fired) break;
    }
    {
      INFO("the record in the producer failed");
      CAPTURE(left);
      REQUIRE_MESSAGE(record.fired, "handOver recorded no event");
      CHECK_MESSAGE(record.threw, "handOver did not throw");
      CHECK_MESSAGE(left == "1 device allocation fewer",
                    "used was not freed before the record (an event recorded before the free orders nothing after it), or an event was left");
      CHECK_MESSAGE(wbx::contextStack() == stackBefore, "a handOver that threw left the context stack changed");
    }
    {
      // The wait is a call of its own that can fail: the consumer is then not ordered after the free.
      Failed wait;
      left = attempt("cuStreamWaitEvent", wait, waits);
      INFO("the consumer's wait failed");
      CAPTURE(left);
      REQUIRE_MESSAGE(wait.fired, "the consumer did not wait with cuStreamWaitEvent");
      CHECK_MESSAGE(wait.threw, "handOver did not throw when the consumer's wait failed");
      CHECK_MESSAGE(left == "1 device allocation fewer", "used was not freed, or an event (or a block) was left");
      CHECK_MESSAGE(wbx::contextStack() == stackBefore, "a handOver that threw left the context stack changed");
    }
    Failed alloc;
    left = attempt("cuMemAllocFromPoolAsync", alloc, waits);
    INFO("the consumer's allocation failed");
    CAPTURE(left);
    CAPTURE(waits);
    REQUIRE_MESSAGE(alloc.fired, "the consumer's block was not taken with cuMemAllocFromPoolAsync");
    CHECK_MESSAGE(alloc.threw, "handOver did not throw");
    CHECK_MESSAGE(waits >= 1, "the consumer allocated before it waited for the producer's free");
    CHECK_MESSAGE(left == "1 device allocation fewer", "used was not freed, or an event was left");
    CHECK_MESSAGE(wbx::contextStack() == stackBefore, "a handOver that threw left the context stack changed");
  }
}
