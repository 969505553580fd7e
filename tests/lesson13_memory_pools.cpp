// Lesson 13's claims: the device has a default pool with the documented defaults; cuMemAllocAsync,
// copies and cuMemFreeAsync return while their stream is blocked and run in order; an allocation
// names the pool it came from; the release threshold decides what a synchronisation tries to give
// back and cuMemPoolTrimTo gives back the rest; a freed block goes to another stream only through the
// stream order (an event) or the policies that allow more; cuCtxDestroy leaves a pool's block allocated;
// another device reaches a pool only once granted; a warm pool allocates and frees faster than
// cuMemAlloc and cuMemFree. Pending work comes from the gate kernel (common/gate.hpp): nothing here
// sleeps, and no gate stays closed past its deadline. Which block a pool hands out is the driver's
// choice (the guide: a newer driver "may change, enhance, augment and/or reorder" the reuse
// policies), and a synchronisation only "will try to" release memory: the cases print what this
// driver chose (driver 580's choices are on the page) and assert only what the reference promises.
#include "damaged_images.hpp"
#include "gate.hpp"
#include "support.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace {

constexpr size_t kBlock = 32u << 20;

// The primary context of device 0, current, and the kernels of streams.fatbin.
struct Lab {
  wbt::RetainedPrimary primary{wbt::deviceKeepingPrimary(0)};
  wbt::Pushed current{primary.get()};
  CUlibrary library = nullptr;
  wb::StreamKernels k;
  Lab() {
    CU_CHECK(cuLibraryLoadFromFile(&library, wb::verifiedImagePath("streams.fatbin").c_str(), nullptr, nullptr, 0,
                                   nullptr, nullptr, 0));
    k = wb::StreamKernels::load(library);  // loaded before any gate closes
  }
  ~Lab() { cuLibraryUnload(library); }
  CUdevice dev() const { return primary.device(); }
};

CUmemoryPool createPool(CUdevice dev, size_t maxSize) {
  CUmemPoolProps props{};
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.handleTypes = CU_MEM_HANDLE_TYPE_NONE;
  props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  props.location.id = dev;
#if CUDA_VERSION >= 12060
  props.maxSize = maxSize;
#else
  REQUIRE(maxSize == 0);
#endif
  CUmemoryPool pool = nullptr;
  CU_CHECK(cuMemPoolCreate(&pool, &props));
  return pool;
}

// A pool of device memory on dev, destroyed at scope exit. Declare it before the streams that use
// it, so they are synchronised and gone first.
class Pool {
 public:
  explicit Pool(CUdevice dev, size_t maxSize = 0) : pool_(createPool(dev, maxSize)) {}
  ~Pool() { cuMemPoolDestroy(pool_); }
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;
  CUmemoryPool get() const { return pool_; }
  cuuint64_t stat(CUmemPool_attribute what) const {
    cuuint64_t value = 0;
    CU_CHECK(cuMemPoolGetAttribute(pool_, what, &value));
    return value;
  }
  cuuint64_t reserved() const { return stat(CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT); }
  cuuint64_t used() const { return stat(CU_MEMPOOL_ATTR_USED_MEM_CURRENT); }
  void set(CUmemPool_attribute what, cuuint64_t value) { CU_CHECK(cuMemPoolSetAttribute(pool_, what, &value)); }
  void setPolicy(CUmemPool_attribute which, bool on) {
    int value = on ? 1 : 0;
    CU_CHECK(cuMemPoolSetAttribute(pool_, which, &value));
  }

 private:
  CUmemoryPool pool_ = nullptr;
};

using wbt::Stream;

class Event {
 public:
  Event() { CU_CHECK(cuEventCreate(&e_, CU_EVENT_DISABLE_TIMING)); }
  ~Event() { cuEventDestroy(e_); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  CUevent get() const { return e_; }

 private:
  CUevent e_ = nullptr;
};

// A block from a pool in a stream, freed in that stream at scope exit.
class Block {
 public:
  Block(const Pool& pool, size_t size, CUstream s) : s_(s) { CU_CHECK(cuMemAllocFromPoolAsync(&p_, size, pool.get(), s)); }
  ~Block() { cuMemFreeAsync(p_, s_); }
  Block(const Block&) = delete;
  Block& operator=(const Block&) = delete;
  CUdeviceptr get() const { return p_; }

 private:
  CUdeviceptr p_ = 0;
  CUstream s_;
};

// Pointers from the stream-ordered allocator, freed in a stream and waited for at scope exit.
struct FreedAtExit {
  CUstream s;
  std::vector<CUdeviceptr> ptrs;
  ~FreedAtExit() {
    for (CUdeviceptr p : ptrs)
      if (p) cuMemFreeAsync(p, s);
    cuStreamSynchronize(s);
  }
};

// Makes pool the device's current pool for the scope, and the one before current again after.
class CurrentPool {
 public:
  CurrentPool(CUdevice dev, CUmemoryPool pool) : dev_(dev) {
    CU_CHECK(cuDeviceGetMemPool(&before_, dev));
    CU_CHECK(cuDeviceSetMemPool(dev, pool));
  }
  ~CurrentPool() { cuDeviceSetMemPool(dev_, before_); }
  CurrentPool(const CurrentPool&) = delete;
  CurrentPool& operator=(const CurrentPool&) = delete;

 private:
  CUdevice dev_;
  CUmemoryPool before_ = nullptr;
};

CUmemoryPool poolOf(CUdeviceptr p) {
  CUmemoryPool owner = nullptr;
  CU_CHECK(cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, p));
  return owner;
}

// A kBlock allocated and freed in stream a (behind a gate, the free stays pending).
CUdeviceptr allocAndFree(const Pool& pool, CUstream a) {
  CUdeviceptr p = 0;
  CU_CHECK(cuMemAllocFromPoolAsync(&p, kBlock, pool.get(), a));
  CU_CHECK(cuMemFreeAsync(p, a));
  return p;
}

void launchStamp(const Lab& lab, wb::PinnedWords& words, size_t slot, CUstream s) {
  CUdeviceptr counter = words.device(0), where = words.device(slot);
  void* args[] = {&counter, &where};
  CU_CHECK(cuLaunchKernel(lab.k.stamp, 1, 1, 1, 1, 1, 1, 0, s, args, nullptr));
}

// Spins on pinned memory until a kernel writes the slot: no CUDA call, so no synchronisation.
bool waitForWord(const wb::PinnedWords& words, size_t slot) {
  const wb::Stopwatch clock;
  while (words.read(slot) == 0)
    if (clock.ms() > 10000) return false;
  return true;
}

CUmemAccess_flags accessFrom(const Pool& pool, CUdevice dev) {
  CUmemLocation where{};
  where.type = CU_MEM_LOCATION_TYPE_DEVICE;
  where.id = dev;
  CUmemAccess_flags flags = CU_MEM_ACCESS_FLAGS_PROT_READ;
  CU_CHECK(cuMemPoolGetAccess(&flags, pool.get(), &where));
  return flags;
}

template <class AllocAndFree>
double medianUs(AllocAndFree&& allocAndFree) {
  std::vector<double> us;
  for (int i = 0; i < 24; ++i) {
    const wb::Stopwatch clock;
    allocAndFree();
    if (i >= 3) us.push_back(clock.ms() * 1000.0);
  }
  std::sort(us.begin(), us.end());
  return us[us.size() / 2];
}

}  // namespace

TEST_SUITE("default-pool") {
  TEST_CASE("the device supports pools; its current pool is its default pool, with release threshold 0 and every reuse policy on") {
    Lab lab;
    CHECK(wbt::attribute(lab.dev(), CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED) == 1);
    CUmemoryPool byDefault = nullptr, current = nullptr;
    REQUIRE(cuDeviceGetDefaultMemPool(&byDefault, lab.dev()) == CUDA_SUCCESS);
    REQUIRE(cuDeviceGetMemPool(&current, lab.dev()) == CUDA_SUCCESS);
    CHECK(byDefault != nullptr);
    CHECK(current == byDefault);
    cuuint64_t threshold = 1;
    CHECK(cuMemPoolGetAttribute(byDefault, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold) == CUDA_SUCCESS);
    CHECK(threshold == 0);
    for (CUmemPool_attribute policy : {CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES,
                                       CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC,
                                       CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES}) {
      const int which = static_cast<int>(policy);
      CAPTURE(which);
      int on = 0;
      CHECK(cuMemPoolGetAttribute(byDefault, policy, &on) == CUDA_SUCCESS);
      CHECK(on == 1);
    }
  }
}

TEST_SUITE("stream-order") {
  TEST_CASE("cuMemAllocAsync, copies and cuMemFreeAsync return while their stream is blocked, and run in order once it runs") {
    Lab lab;
    constexpr size_t n = 1u << 18, size = n * sizeof(unsigned);
    unsigned *src = nullptr, *dst = nullptr;
    CU_CHECK(cuMemAllocHost(reinterpret_cast<void**>(&src), size));
    CU_CHECK(cuMemAllocHost(reinterpret_cast<void**>(&dst), size));
    std::fill(src, src + n, 7u);
    std::fill(dst, dst + n, 0u);
    {
      Stream s;
      wb::Gate gate(lab.k.gate, s.get());
      CUdeviceptr p = 0;
      CHECK(cuMemAllocAsync(&p, size, s.get()) == CUDA_SUCCESS);
      CHECK(p != 0);
      CHECK(cuMemcpyHtoDAsync(p, src, size, s.get()) == CUDA_SUCCESS);
      CHECK(cuMemcpyDtoHAsync(dst, p, size, s.get()) == CUDA_SUCCESS);
      CHECK(cuMemFreeAsync(p, s.get()) == CUDA_SUCCESS);
      CHECK(gate.outcome() == wb::Gate::Waiting);  // every call returned before the stream ran
      CHECK(dst[0] == 0u);
      gate.open();
      s.sync();
      CHECK(gate.outcome() == wb::Gate::Released);
    }
    CHECK(std::all_of(dst, dst + n, [](unsigned v) { return v == 7u; }));
    CU_CHECK(cuMemFreeHost(src));
    CU_CHECK(cuMemFreeHost(dst));
  }
}

TEST_SUITE("own-pool") {
  TEST_CASE("an allocation names its pool: the one given to cuMemAllocFromPoolAsync, the device's current one for cuMemAllocAsync") {
    Lab lab;
    CUmemoryPool byDefault = nullptr;
    CU_CHECK(cuDeviceGetDefaultMemPool(&byDefault, lab.dev()));
    Pool mine(lab.dev());
    Stream s;
    FreedAtExit ptrs{s.get(), {0, 0, 0}};
    CU_CHECK(cuMemAllocAsync(&ptrs.ptrs[0], 1u << 20, s.get()));
    CU_CHECK(cuMemAllocFromPoolAsync(&ptrs.ptrs[1], 1u << 20, mine.get(), s.get()));
    {
      CurrentPool current(lab.dev(), mine.get());
      CUmemoryPool now = nullptr;
      CU_CHECK(cuDeviceGetMemPool(&now, lab.dev()));
      CHECK(now == mine.get());
      CU_CHECK(cuMemAllocAsync(&ptrs.ptrs[2], 1u << 20, s.get()));
    }
    s.sync();  // ask about an allocation only once the stream has made it
    CHECK(poolOf(ptrs.ptrs[0]) == byDefault);
    CHECK(poolOf(ptrs.ptrs[1]) == mine.get());
    CHECK(poolOf(ptrs.ptrs[2]) == mine.get());
  }

  TEST_CASE("destroying the device's current pool makes its default pool current again") {
    Lab lab;
    CUmemoryPool byDefault = nullptr;
    CU_CHECK(cuDeviceGetDefaultMemPool(&byDefault, lab.dev()));
    const CUmemoryPool pool = createPool(lab.dev(), 0);
    CurrentPool current(lab.dev(), pool);  // sets the default back at exit, should the destroy fail
    CHECK(cuMemPoolDestroy(pool) == CUDA_SUCCESS);
    CUmemoryPool now = nullptr;
    CHECK(cuDeviceGetMemPool(&now, lab.dev()) == CUDA_SUCCESS);
    CHECK(now == byDefault);
  }
}

TEST_SUITE("release-threshold") {
  TEST_CASE("with release threshold 0, a freed block stays reserved until its stream is synchronised (then the allocator will try to give it back: printed)") {
    Lab lab;
    Pool pool(lab.dev());
    Stream s;
    const CUdeviceptr p = allocAndFree(pool, s.get());
    CHECK(p != 0);
    CHECK(pool.reserved() >= kBlock);
    s.sync();
    MESSAGE("after the synchronisation the pool reserves " << pool.reserved() << " B (driver 580: none)");
  }

  TEST_CASE("with a high release threshold a freed block stays reserved, out of the device's free memory, until cuMemPoolTrimTo") {
    Lab lab;
    Pool pool(lab.dev());
    pool.set(CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, UINT64_MAX);
    Stream s;
    const size_t freeBefore = wbt::freeMemory();
    allocAndFree(pool, s.get());
    s.sync();
    const size_t freeHeld = wbt::freeMemory();
    CHECK(pool.reserved() >= kBlock);
    CHECK(pool.used() == 0);
    CHECK(freeHeld < freeBefore);
    CU_CHECK(cuMemPoolTrimTo(pool.get(), kBlock));  // keeps at least kBlock: nothing to give back
    CHECK(pool.reserved() >= kBlock);
    CU_CHECK(cuMemPoolTrimTo(pool.get(), 0));
    CHECK(pool.reserved() < kBlock);
    CHECK(wbt::freeMemory() > freeHeld);
  }

  TEST_CASE("the high watermarks record the peak, and setting them to 0 resets them to the current values") {
    Lab lab;
    Pool pool(lab.dev());
    pool.set(CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, UINT64_MAX);
    Stream s;
    {
      Block one(pool, kBlock, s.get()), two(pool, kBlock, s.get());  // both in use at once
    }
    s.sync();
    CHECK(pool.used() == 0);
    CHECK(pool.stat(CU_MEMPOOL_ATTR_USED_MEM_HIGH) >= 2 * kBlock);
    CHECK(pool.stat(CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH) >= 2 * kBlock);
    pool.set(CU_MEMPOOL_ATTR_USED_MEM_HIGH, 0);
    pool.set(CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH, 0);
    CHECK(pool.stat(CU_MEMPOOL_ATTR_USED_MEM_HIGH) == 0);
    CHECK(pool.stat(CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH) == pool.reserved());
    cuuint64_t notZero = 1;
    CHECK(cuMemPoolSetAttribute(pool.get(), CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH, &notZero) != CUDA_SUCCESS);
  }
}

TEST_SUITE("reuse") {
  TEST_CASE("a stream that freed a block allocates again before it has run either, without waiting (which block it gets is printed)") {
    Lab lab;
    Pool pool(lab.dev());
    Stream a;
    wb::Gate gate(lab.k.gate, a.get());
    CUdeviceptr first = 0;
    CU_CHECK(cuMemAllocFromPoolAsync(&first, kBlock, pool.get(), a.get()));
    const cuuint64_t one = pool.reserved();
    CU_CHECK(cuMemFreeAsync(first, a.get()));
    Block second(pool, kBlock, a.get());
    CHECK(second.get() != 0);
    MESSAGE("the same block: " << (second.get() == first) << ", the pool still reserves one block's worth: "
                               << (pool.reserved() == one) << " (driver 580: both)");
    CHECK(gate.outcome() == wb::Gate::Waiting);
    gate.open();
  }

  TEST_CASE("another stream, not ordered after the pending free, gets a block while the free is pending (which one, and whether it waits, is printed)") {
    Lab lab;
    Pool pool(lab.dev());
    Stream a, b;
    wb::Gate gate(lab.k.gate, a.get());
    const CUdeviceptr first = allocAndFree(pool, a.get());
    bool same = false;
    {
      Block second(pool, kBlock, b.get());
      CHECK(second.get() != 0);
      same = second.get() == first;
    }
    b.sync();  // bounded by the gate's deadline, should b wait for a after all
    MESSAGE("the same block: " << same << "; B finished with A's gate still closed: "
                               << (gate.outcome() == wb::Gate::Waiting) << " (driver 580: no, yes)");
    gate.open();
  }

  TEST_CASE("a stream waiting on an event recorded after the free gets a block, with REUSE_FOLLOW_EVENT_DEPENDENCIES on and off (which one is printed)") {
    Lab lab;
    for (bool follow : {true, false}) {
      CAPTURE(follow);
      Pool pool(lab.dev());
      pool.setPolicy(CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES, follow);
      Stream a, b;
      Event freed;
      wb::Gate gate(lab.k.gate, a.get());
      const CUdeviceptr first = allocAndFree(pool, a.get());
      CU_CHECK(cuEventRecord(freed.get(), a.get()));
      CU_CHECK(cuStreamWaitEvent(b.get(), freed.get(), 0));
      Block second(pool, kBlock, b.get());
      CHECK(second.get() != 0);
      MESSAGE("follow " << follow << ": the same block " << (second.get() == first) << " (driver 580: as follow)");
      gate.open();
    }
  }
}

TEST_SUITE("reuse-policies") {
  TEST_CASE("with nothing ordering it, a stream gets a block after the device has passed another stream's free, with REUSE_ALLOW_OPPORTUNISTIC on and off (which one is printed)") {
    Lab lab;
    for (bool allowed : {true, false}) {
      CAPTURE(allowed);
      Pool pool(lab.dev());
      pool.setPolicy(CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC, allowed);
      wb::PinnedWords words(2);
      Stream a, b;
      const CUdeviceptr first = allocAndFree(pool, a.get());
      launchStamp(lab, words, 1, a.get());  // after the free
      REQUIRE(waitForWord(words, 1));        // the host knows A passed its free, without synchronising
      Block second(pool, kBlock, b.get());
      CHECK(second.get() != 0);
      MESSAGE("opportunistic " << allowed << ": the same block " << (second.get() == first) << " (driver 580: as allowed)");
    }
  }

#if CUDA_VERSION >= 12060
  TEST_CASE("a pool created with maxSize refuses a block beyond it") {
    Lab lab;
    Pool pool(lab.dev(), kBlock);
    Stream s;
    Block first(pool, kBlock, s.get());
    CUdeviceptr second = 0;
    const CUresult rc = cuMemAllocFromPoolAsync(&second, kBlock, pool.get(), s.get());
    CHECK(rc != CUDA_SUCCESS);
    if (rc == CUDA_SUCCESS) CU_CHECK(cuMemFreeAsync(second, s.get()));
  }

  TEST_CASE("a full pool whose one block is pending a free no order reaches refuses another stream without REUSE_ALLOW_INTERNAL_DEPENDENCIES; with it, what it does is printed") {
    Lab lab;
    for (bool allowed : {true, false}) {
      CAPTURE(allowed);
      Pool pool(lab.dev(), kBlock);  // room for one block
      pool.setPolicy(CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES, allowed);
      wb::PinnedWords words(3);
      Stream a, b, c;
      FreedAtExit taken{b.get(), {0}};
      wb::Gate gate(lab.k.gate, a.get());
      const CUdeviceptr first = allocAndFree(pool, a.get());
      const CUresult rc = cuMemAllocFromPoolAsync(&taken.ptrs[0], kBlock, pool.get(), b.get());
      if (!allowed) {
        CHECK(rc != CUDA_SUCCESS);
        continue;  // the gate opens, the streams drain, the pool goes, in that order
      }
      MESSAGE("internal dependencies on: " << wb::errorName(rc) << " (driver 580: CUDA_SUCCESS)");
      if (rc != CUDA_SUCCESS) continue;
      launchStamp(lab, words, 1, b.get());
      launchStamp(lab, words, 2, c.get());
      c.sync();
      CHECK(words.read(2) != 0);  // the GPU was free to run a stamp
      const bool waited = words.read(1) == 0 && cuStreamQuery(b.get()) == CUDA_ERROR_NOT_READY;
      MESSAGE("A's block: " << (taken.ptrs[0] == first) << "; B's stamp waited for A's gate: " << waited
                            << " (driver 580: both)");
      // Stream order is the pool's promise: a block whose free is still pending is handed out only
      // with B made to wait for that free.
      if (taken.ptrs[0] == first) CHECK(waited);
      gate.open();
      b.sync();
      CHECK(words.read(1) != 0);  // B's work ran once nothing held it
    }
  }
#endif
}

TEST_SUITE("context-destroy") {
  TEST_CASE("a pool's block belongs to no context: cuCtxDestroy leaves it allocated, and an explicit free in another context's stream gives it back") {
    Lab lab;
    Pool pool(lab.dev());
    CUdeviceptr pooled = 0;
    {
      wbt::OwnedContext ctx(lab.dev());  // pushed over the primary context
      {
        Stream s;
        CU_CHECK(cuMemAllocFromPoolAsync(&pooled, kBlock, pool.get(), s.get()));
        s.sync();
      }
      CUcontext owner = ctx.get();
      CHECK(cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_CONTEXT, pooled) == CUDA_SUCCESS);
      CHECK(owner == nullptr);
      ctx.destroy();  // pops it: the primary context is current again
    }
    CHECK(wbt::current() == lab.primary.get());
    CHECK(pool.used() >= kBlock);
    Stream s;  // in the primary context: a stream of any context may free a pool's block
    CHECK(cuMemFreeAsync(pooled, s.get()) == CUDA_SUCCESS);
    s.sync();
    CHECK(pool.used() == 0);
  }
}

TEST_SUITE("allocation-cost") {
  TEST_CASE("at 64 MiB, an allocation plus its free from a warm pool costs the host less than cuMemAlloc plus cuMemFree") {
    Lab lab;
    Pool pool(lab.dev());
    pool.set(CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, UINT64_MAX);
    Stream s;
    const size_t size = 64u << 20;
    CUdeviceptr p = 0;
    const double plain = medianUs([&] {
      CU_CHECK(cuMemAlloc(&p, size));
      CU_CHECK(cuMemFree(p));
    });
    const double pooled = medianUs([&] {
      CU_CHECK(cuMemAllocFromPoolAsync(&p, size, pool.get(), s.get()));
      CU_CHECK(cuMemFreeAsync(p, s.get()));
    });
    s.sync();
    MESSAGE("cuMemAlloc+cuMemFree " << plain << " us, pool (warm) " << pooled << " us");
    CHECK(pooled < plain);
  }
}

TEST_SUITE("multi-device") {
  TEST_CASE("another device reaches a pool's memory only once cuMemPoolSetAccess grants it; then its kernel writes it") {
    Lab lab;
    const int count = wbt::initDriver();
    REQUIRE(count >= 2);
    const CUdevice dev1 = wbt::device(1);
    int can = 0;
    CU_CHECK(cuDeviceCanAccessPeer(&can, dev1, lab.dev()));
    if (can != 1) return wbt::skipCase("device 1 cannot access device 0's memory (cuDeviceCanAccessPeer 0)");
    Pool pool(lab.dev());
    CHECK(accessFrom(pool, lab.dev()) == CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
    CHECK(accessFrom(pool, dev1) == CU_MEM_ACCESS_FLAGS_PROT_NONE);
    CUmemAccessDesc grant{};
    grant.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    grant.location.id = dev1;
    grant.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    CU_CHECK(cuMemPoolSetAccess(pool.get(), &grant, 1));
    CHECK(accessFrom(pool, dev1) == CU_MEM_ACCESS_FLAGS_PROT_READWRITE);

    unsigned n = 1u << 16, rounds = 1;
    Stream s;
    Block data(pool, n * sizeof(float), s.get());
    CU_CHECK(cuMemsetD32Async(data.get(), 0, n, s.get()));
    s.sync();
    {
      wbt::RetainedPrimary primary1(dev1);
      wbt::Pushed current(primary1.get());
      CUdeviceptr p = data.get();
      void* args[] = {&p, &n, &rounds};
      CU_CHECK(cuLaunchKernel(lab.k.burn, n / 256, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr));
      CU_CHECK(cuCtxSynchronize());
    }
    std::vector<float> back(n);
    CU_CHECK(cuMemcpyDtoH(back.data(), data.get(), n * sizeof(float)));
    const float expected = 0.0f * 0.999f + 0.001f;
    CHECK(std::all_of(back.begin(), back.end(), [&](float v) { return v == expected; }));
  }
}

TEST_SUITE("damaged-images") {
  TEST_CASE("pointed at an empty folder or at damaged images, the program stops in seconds, naming the file") {
    wbt::checkProgramRefusesDamagedImages(WORKBOOK_LESSON_PROGRAM);
  }
}
