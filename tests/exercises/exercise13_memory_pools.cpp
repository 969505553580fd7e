// The checks of lesson 13's exercises (lessons/13-memory-pools/exercises.cpp). Pending work comes
// from the gate kernel of lesson 09: nothing sleeps, and every gate gives up at its deadline.
#include "check.hpp"
#include "gate.hpp"
#include "13-memory-pools/exercises.hpp"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace {

// The primary context of device 0, current, and the gate, stamp and burn kernels loaded into it.
struct Lab {
  wbt::RetainedPrimary primary{(wbt::initDriver(), wbt::device(0))};
  wbt::Pushed current{primary.get()};
  CUlibrary library = nullptr;
  wb::StreamKernels k;
  Lab() {
    CU_CHECK(cuLibraryLoadFromFile(&library, wb::verifiedImagePath("streams.fatbin").c_str(), nullptr, nullptr, 0,
                                   nullptr, nullptr, 0));
    k = wb::StreamKernels::load(library);
  }
  ~Lab() { cuLibraryUnload(library); }
  CUdevice dev() const { return primary.device(); }
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

}  // namespace

EXERCISE("scratch-per-request", "A stream-ordered scratch buffer per request that never blocks the host",
         "cuMemAllocFromPoolAsync(&scratch, bytes, pool, stream), cuMemcpyDtoDAsync in and out, then "
         "cuMemFreeAsync(scratch, stream): every call only enqueues. Do not synchronise the stream to free the "
         "buffer, and take it from the pool you are given, not the device's current pool.") {
  TEST_CASE("serveRequest returns before its stream has run, the output is the input, and the scratch buffer came from the pool and went back") {
    Lab lab;
    Pool pool(lab.dev());
    const size_t bytes = 4u << 20, n = bytes / sizeof(unsigned);
    wbt::DeviceBuffer input(bytes), output(bytes);
    std::vector<unsigned> pattern(n);
    for (size_t i = 0; i < n; ++i) pattern[i] = static_cast<unsigned>(i * 2654435761u);
    CU_CHECK(cuMemcpyHtoD(input.get(), pattern.data(), bytes));
    CU_CHECK(cuMemsetD8(output.get(), 0, bytes));
    Stream s;
    wb::Gate::Outcome seen = wb::Gate::TimedOut;
    {
      wb::Gate gate(lab.k.gate, s.get(), 2.0);  // a learner who waits for the stream waits 2 s at most
      ex13::serveRequest(pool.get(), s.get(), input.get(), output.get(), bytes);
      seen = gate.outcome();
      gate.open();
      s.sync();
    }
    CHECK_MESSAGE(seen == wb::Gate::Waiting, "serveRequest waited for the stream: it must only enqueue");
    std::vector<unsigned> back(n);
    CU_CHECK(cuMemcpyDtoH(back.data(), output.get(), bytes));
    CHECK(back == pattern);
    CHECK_MESSAGE(pool.stat(CU_MEMPOOL_ATTR_USED_MEM_HIGH) >= bytes, "the scratch buffer did not come from the pool");
    CHECK_MESSAGE(pool.stat(CU_MEMPOOL_ATTR_USED_MEM_CURRENT) == 0, "the scratch buffer was not given back");
  }
}

EXERCISE("steady-pool", "A pool whose reserved memory stays flat across iterations",
         "cuMemPoolCreate with CUmemPoolProps{} set to CU_MEM_ALLOCATION_TYPE_PINNED on CU_MEM_LOCATION_TYPE_DEVICE "
         "dev, then cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &value) with a cuuint64_t value. "
         "The default threshold (0) gives everything back at each synchronisation; UINT64_MAX keeps every burst "
         "forever: the working set is the threshold that keeps one and not the other.") {
  TEST_CASE("five steps of the working set leave the same reserve, at least the working set; after a burst of twice as much it is no more than the working set") {
    Lab lab;
    const size_t workingSet = 32u << 20;
    const CUmemoryPool made = ex13::createSteadyPool(lab.dev(), workingSet);
    CUmemoryPool byDefault = nullptr;
    CU_CHECK(cuDeviceGetDefaultMemPool(&byDefault, lab.dev()));
    Pool pool(made, byDefault);
    REQUIRE_MESSAGE(made != nullptr, "no pool returned");
    REQUIRE_MESSAGE(made != byDefault, "the device's default pool: make a new one, the default is the whole process's");
    Stream s;
    const auto step = [&](size_t bytes) {
      CUdeviceptr p = 0;
      CU_CHECK(cuMemAllocFromPoolAsync(&p, bytes, pool.get(), s.get()));
      CU_CHECK(cuMemsetD8Async(p, 1, bytes, s.get()));
      CU_CHECK(cuMemFreeAsync(p, s.get()));
      s.sync();
      return pool.stat(CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT);
    };
    std::vector<cuuint64_t> reserved;
    std::string seen;  // what each step left reserved, for the failure message
    for (int i = 0; i < 5; ++i) {
      reserved.push_back(step(workingSet));
      seen += (seen.empty() ? "" : ", ") + wb::bytes(static_cast<size_t>(reserved.back()));
    }
    CAPTURE(seen);
    CHECK_MESSAGE(reserved[0] >= workingSet, "the working set was given back at the synchronisation");
    CHECK(std::all_of(reserved.begin(), reserved.end(), [&](cuuint64_t r) { return r == reserved[0]; }));
    const std::string afterBurst = wb::bytes(static_cast<size_t>(step(2 * workingSet)));
    CAPTURE(afterBurst);
    CHECK_MESSAGE(pool.stat(CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT) <= workingSet,
                  "the pool kept a burst beyond the working set");
  }
}

EXERCISE("event-handover", "Safe cross-stream reuse ordered by an event",
         "cuMemFreeAsync(used, producer); cuEventRecord an event in the producer; cuStreamWaitEvent(consumer, "
         "event); then cuMemAllocFromPoolAsync in the consumer. Without the event the pool must map a new block "
         "and the consumer's work is not ordered after the producer's; do not synchronise the producer instead.") {
  TEST_CASE("the consumer gets the producer's block, the pool does not grow, the call does not wait, and the consumer's work waits for the producer's") {
    Lab lab;
    const size_t bytes = 32u << 20;
    Pool pool(lab.dev());
    wb::PinnedWords words(3);  // [0] the stamp counter, [1] the consumer's stamp, [2] the producer's
    Stream producer, consumer;
    FreedAtExit handed{consumer.get()};
    FreedAtExit used{producer.get()};
    wb::Gate gate(lab.k.gate, producer.get());  // the producer's work is still running...
    CU_CHECK(cuMemAllocFromPoolAsync(&used.p, bytes, pool.get(), producer.get()));
    launchStamp(lab, words, 2, producer.get());  // ...and its last step, which stamps, comes before the free
    const cuuint64_t reservedBefore = pool.stat(CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT);
    const CUdeviceptr freed = used.p;
    handed.p = ex13::handOver(pool.get(), freed, bytes, producer.get(), consumer.get());
    used.p = 0;  // handOver freed it
    const bool returnedAtOnce = gate.outcome() == wb::Gate::Waiting;
    const cuuint64_t reservedAfter = pool.stat(CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT);
    launchStamp(lab, words, 1, consumer.get());
    const CUresult consumerWhileGated = cuStreamQuery(consumer.get());
    gate.open();
    producer.sync();
    consumer.sync();
    CHECK_MESSAGE(returnedAtOnce, "handOver waited for the producer: order the streams with an event instead");
    CHECK_MESSAGE(handed.p == freed, "the consumer got a new block, not the one the producer freed");
    CHECK_MESSAGE(reservedAfter == reservedBefore, "the pool grew: it could not give the consumer the freed block");
    CHECK_MESSAGE(consumerWhileGated == CUDA_ERROR_NOT_READY, "the consumer did not wait for the producer");
    const unsigned consumerStamp = words.read(1), producerStamp = words.read(2);
    CAPTURE(consumerStamp);
    CAPTURE(producerStamp);
    CHECK_MESSAGE(consumerStamp > producerStamp, "the consumer's work ran before the producer's last step");
  }
}
