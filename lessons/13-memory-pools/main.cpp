// Lesson 13: memory pools and stream-ordered allocation.
//
// What you learn: cuMemAllocAsync and cuMemFreeAsync put an allocation and a free into a stream,
// like a copy or a kernel, and return at once. The memory comes from a pool: the device's default
// pool, or one made with cuMemPoolCreate. A pool keeps freed blocks for reuse, and hands a block
// freed in one stream to another stream only where the stream order makes it safe: the same stream,
// an event the other stream waits on, or (with the policies that allow more) a free already done or
// a dependency the pool inserts itself. All of it is shown with the gate kernel of lesson 09, never
// by timing. The release threshold decides what a pool tries to give back to the device at a
// synchronisation; RESERVED_MEM_* and USED_MEM_* show it, and cuMemPoolTrimTo gives it back on
// demand. A pool's allocation belongs to no context, so cuCtxDestroy does not free it. Then another
// device's access to a pool, and what an allocation plus its free costs from a warm pool against
// cuMemAlloc and cuMemFree, measured in the same run.
//
// APIs: cuMemAllocAsync, cuMemAllocFromPoolAsync, cuMemFreeAsync, cuDeviceGetDefaultMemPool,
//       cuDeviceGetMemPool, cuDeviceSetMemPool, cuMemPoolCreate, cuMemPoolDestroy,
//       cuMemPoolGetAttribute, cuMemPoolSetAttribute, cuMemPoolTrimTo, cuMemPoolGetAccess,
//       cuMemPoolSetAccess, cuPointerGetAttribute, cuDeviceCanAccessPeer, cuCtxDestroy
// Run:  ctest -R lesson13   (or build/lessons/lesson13-memory-pools [--csv lesson13-figure.csv])
#include "figure.hpp"
#include "gate.hpp"
#include "workbook.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using Kernels = wb::StreamKernels;  // gate, stamp and burn, loaded into the context (common/gate.hpp)

constexpr size_t kBlock = 32u << 20;  // the block the reuse steps allocate and free
constexpr size_t kBig = 64u << 20;    // the block of the release-threshold and cuCtxDestroy steps

cuuint64_t poolStat(CUmemoryPool pool, CUmemPool_attribute what) {
  cuuint64_t value = 0;
  CU_CHECK(cuMemPoolGetAttribute(pool, what, &value));
  return value;
}

cuuint64_t reservedIn(CUmemoryPool pool) { return poolStat(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT); }

int policy(CUmemoryPool pool, CUmemPool_attribute which) {
  int on = 0;
  CU_CHECK(cuMemPoolGetAttribute(pool, which, &on));
  return on;
}

void setPolicy(CUmemoryPool pool, CUmemPool_attribute which, bool on) {
  int value = on ? 1 : 0;
  CU_CHECK(cuMemPoolSetAttribute(pool, which, &value));
}

std::string bytes(cuuint64_t n) { return wb::bytes(static_cast<size_t>(n)); }

size_t freeMemory() {
  size_t free = 0, total = 0;
  CU_CHECK(cuMemGetInfo(&free, &total));
  return free;
}

// The pool an allocation came from (CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE), NULL for none.
CUmemoryPool poolOf(CUdeviceptr p) {
  CUmemoryPool owner = nullptr;
  CU_CHECK(cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, p));
  return owner;
}

const char* sameOrNew(CUdeviceptr first, CUdeviceptr second) {
  return second == first ? "the same block" : "a new block";
}

CUstream newStream() {
  CUstream s = nullptr;
  CU_CHECK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  return s;
}

// One stamp kernel into a slot of pinned words, in a stream: the slot gets the order it ran in.
void stampIn(const Kernels& k, wb::PinnedWords& stamps, size_t slot, CUstream s) {
  CUdeviceptr counter = stamps.device(0), where = stamps.device(slot);
  void* args[] = {&counter, &where};
  CU_CHECK(cuLaunchKernel(k.stamp, 1, 1, 1, 1, 1, 1, 0, s, args, nullptr));
}

// Spins on a word of pinned memory until a kernel sets it. No CUDA call, so the host learns that a
// stream got there without synchronising with it. Gives up after 10 s.
bool waitForWord(const wb::PinnedWords& words, size_t slot) {
  const wb::Stopwatch clock;
  while (words.read(slot) == 0)
    if (clock.ms() > 10000) return false;
  return true;
}

//! [default-pool]
// A device that supports the stream-ordered allocator has a default pool. cuMemAllocAsync takes from
// the device's current pool, which is the default one until cuDeviceSetMemPool names another.
CUmemoryPool defaultPool(CUdevice dev) {
  int supported = 0;
  CU_CHECK(cuDeviceGetAttribute(&supported, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, dev));
  std::printf("CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED: %d\n", supported);
  wb::expect(supported == 1, "a device with memory pools",
             "the attribute is 0: cuMemAllocAsync is not supported");
  CUmemoryPool byDefault = nullptr, current = nullptr;
  CU_CHECK(cuDeviceGetDefaultMemPool(&byDefault, dev));
  CU_CHECK(cuDeviceGetMemPool(&current, dev));
  std::printf("default pool %s, current pool %s: %s\n", wb::hex(byDefault).c_str(), wb::hex(current).c_str(),
              current == byDefault ? "the same" : "DIFFERENT");
  wb::expect(current == byDefault, "the default pool current", "another pool is current");
  const cuuint64_t threshold = poolStat(byDefault, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD);
  const int follow = policy(byDefault, CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES),
            opportunistic = policy(byDefault, CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC),
            internal = policy(byDefault, CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES);
  std::printf("release threshold %llu bytes; reuse policies: follow event dependencies %d, "
              "opportunistic %d, internal dependencies %d\n",
              static_cast<unsigned long long>(threshold), follow, opportunistic, internal);
  wb::expect(threshold == 0 && follow == 1 && opportunistic == 1 && internal == 1,
             "the documented defaults: release threshold 0, every reuse policy on", "other values");
  return byDefault;
}
//! [default-pool]

//! [stream-order]
// Allocate, fill, read back and free, all in one stream behind a closed gate: every call returns at
// once, and the stream runs them in order once the gate opens. Nothing waits for the device.
void streamOrder(const Kernels& k) {
  constexpr size_t n = 1u << 18, size = n * sizeof(unsigned);  // 1 MiB
  CUstream s = newStream();
  unsigned *src = nullptr, *dst = nullptr;  // pinned, so the copies are asynchronous (lesson 09)
  CU_CHECK(cuMemAllocHost(reinterpret_cast<void**>(&src), size));
  CU_CHECK(cuMemAllocHost(reinterpret_cast<void**>(&dst), size));
  std::fill(src, src + n, 7u);
  std::fill(dst, dst + n, 0u);
  {
    wb::Gate gate(k.gate, s);
    CUdeviceptr p = 0;
    CU_CHECK(cuMemAllocAsync(&p, size, s));  // from the device's current pool
    CU_CHECK(cuMemcpyHtoDAsync(p, src, size, s));
    CU_CHECK(cuMemcpyDtoHAsync(dst, p, size, s));
    CU_CHECK(cuMemFreeAsync(p, s));
    const bool waiting = gate.outcome() == wb::Gate::Waiting;
    std::printf("gate closed: cuMemAllocAsync gave %s; it, both copies and cuMemFreeAsync returned "
                "with the gate %s; dst[0] = %u\n",
                wb::hex(p).c_str(), waiting ? "waiting" : "NOT waiting", dst[0]);
    wb::expect(waiting && dst[0] == 0, "every call returning before the stream ran any of them",
               "the gate had ended, or the copy back had run");
    gate.open();
    CU_CHECK(cuStreamSynchronize(s));
  }
  //! [stream-order]

  //! [stream-order-after]
  const auto wrong = std::count_if(dst, dst + n, [](unsigned v) { return v != 7u; });
  std::printf("gate opened, stream synchronised: %ld of %zu values differ from 7\n",
              static_cast<long>(wrong), n);
  wb::expect(wrong == 0, "the allocation, the copies and the free run in stream order",
             "wrong values came back");
  CU_CHECK(cuMemFreeHost(src));
  CU_CHECK(cuMemFreeHost(dst));
  CU_CHECK(cuStreamDestroy(s));
  //! [stream-order-after]
}

//! [create-pool]
// A pool of device memory on dev, like the default pool but the caller's own. maxSize caps what it
// may ever hold (0: a system-dependent limit).
CUmemoryPool createPool(CUdevice dev, size_t maxSize = 0) {
  CUmemPoolProps props{};  // zeroed: the reserved bytes must be 0
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;  // memory that stays where it is put
  props.handleTypes = CU_MEM_HANDLE_TYPE_NONE;      // not shared with other processes
  props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  props.location.id = dev;
#if CUDA_VERSION >= 12060  // maxSize: in the CUDA 12.6 header, the oldest this course checks
  props.maxSize = maxSize;
#else
  (void)maxSize;
#endif
  CUmemoryPool pool = nullptr;
  CU_CHECK(cuMemPoolCreate(&pool, &props));
  return pool;
}
//! [create-pool]

//! [own-pool]
// One allocation from the current pool, one from a pool named, and one from the current pool after
// cuDeviceSetMemPool made the new pool current. The pointer attribute says where each came from.
void ownPool(CUdevice dev, CUmemoryPool byDefault) {
  CUmemoryPool mine = createPool(dev);
  CUstream s = newStream();
  CUdeviceptr a = 0, b = 0, c = 0;
  CU_CHECK(cuMemAllocAsync(&a, 1u << 20, s));
  CU_CHECK(cuMemAllocFromPoolAsync(&b, 1u << 20, mine, s));
  CU_CHECK(cuDeviceSetMemPool(dev, mine));
  CUmemoryPool current = nullptr;
  CU_CHECK(cuDeviceGetMemPool(&current, dev));
  CU_CHECK(cuMemAllocAsync(&c, 1u << 20, s));
  CU_CHECK(cuDeviceSetMemPool(dev, byDefault));  // set back: the current pool is the whole process's
  CU_CHECK(cuStreamSynchronize(s));  // ask about an allocation only once the stream has made it
  std::printf("cuMemAllocAsync:                       from the %s pool\n",
              poolOf(a) == byDefault ? "default" : "WRONG");
  std::printf("cuMemAllocFromPoolAsync(new pool):     from the %s pool\n",
              poolOf(b) == mine ? "new" : "WRONG");
  std::printf("cuDeviceSetMemPool(new pool), then cuMemAllocAsync: cuDeviceGetMemPool says %s; "
              "from the %s pool\n",
              current == mine ? "the new pool" : "ANOTHER", poolOf(c) == mine ? "new" : "WRONG");
  wb::expect(poolOf(a) == byDefault && poolOf(b) == mine && current == mine && poolOf(c) == mine,
             "each allocation from the pool named or current", "an allocation from another pool");
  for (CUdeviceptr p : {a, b, c}) CU_CHECK(cuMemFreeAsync(p, s));
  CU_CHECK(cuStreamSynchronize(s));
  CU_CHECK(cuMemPoolDestroy(mine));
  CU_CHECK(cuStreamDestroy(s));
}
//! [own-pool]

struct Held {
  cuuint64_t beforeSync, afterSync;
};

//! [held]
// A block allocated and freed in a stream: what the pool reserves just before the stream is
// synchronised, and just after.
Held allocateFreeSync(CUmemoryPool pool, CUstream s, size_t size) {
  CUdeviceptr p = 0;
  CU_CHECK(cuMemAllocFromPoolAsync(&p, size, pool, s));
  CU_CHECK(cuMemFreeAsync(p, s));
  const cuuint64_t before = reservedIn(pool);
  CU_CHECK(cuStreamSynchronize(s));
  return {before, reservedIn(pool)};
}
//! [held]

//! [threshold]
// The same 64 MiB allocated, freed and synchronised twice: under the default release threshold (0),
// then under the highest one. cuMemGetInfo shows what the device has left for everyone else.
// Which block a pool hands out, and whether a synchronisation gives memory back ("will try to"), is
// the driver's to choose (the guide: a newer driver "may change, enhance, augment and/or reorder" the
// reuse policies): the run says what it did against what driver 580 did, and holds nothing to it.
void observed(bool asOn580, const char* what) {
  std::printf("  (%s: %s)\n", what,
              asOn580 ? "as on driver 580" : "unlike driver 580; the reference leaves it to the driver");
}

void releaseThreshold(CUdevice dev) {
  CUmemoryPool pool = createPool(dev);
  CUstream s = newStream();
  const Held atZero = allocateFreeSync(pool, s, kBig);
  std::printf("release threshold 0:          %s reserved before cuStreamSynchronize, %s after\n",
              bytes(atZero.beforeSync).c_str(), bytes(atZero.afterSync).c_str());
  wb::expect(atZero.beforeSync >= kBig, "the freed block reserved until the synchronisation",
             "it was gone before");
  observed(atZero.afterSync < kBig, "the block given back at the synchronisation");
  cuuint64_t keepAll = UINT64_MAX;
  CU_CHECK(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keepAll));
  const size_t freeBefore = freeMemory();
  const Held atMax = allocateFreeSync(pool, s, kBig);
  const size_t freeHeld = freeMemory();
  std::printf("release threshold UINT64_MAX: %s reserved before cuStreamSynchronize, %s after; "
              "the device's free memory is %s lower\n",
              bytes(atMax.beforeSync).c_str(), bytes(atMax.afterSync).c_str(),
              freeHeld < freeBefore ? wb::bytes(freeBefore - freeHeld).c_str() : "NOT");
  wb::expect(atMax.afterSync >= kBig && freeHeld < freeBefore,
             "the freed block kept by the pool, out of everyone else's reach", "the pool gave it back");
  //! [threshold]
  //! [statistics]
  const cuuint64_t used = poolStat(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT),
                   usedHigh = poolStat(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH),
                   reservedHigh = poolStat(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH);
  std::printf("USED_MEM_CURRENT %s, USED_MEM_HIGH %s, RESERVED_MEM_HIGH %s\n", bytes(used).c_str(),
              bytes(usedHigh).c_str(), bytes(reservedHigh).c_str());
  wb::expect(used == 0 && usedHigh >= kBig && reservedHigh >= kBig,
             "nothing in use now, and the high watermarks at the block's size", "other values");
  CU_CHECK(cuMemPoolTrimTo(pool, 0));  // keep nothing that is not in use
  const cuuint64_t trimmed = reservedIn(pool);
  const size_t freeTrimmed = freeMemory();
  std::printf("cuMemPoolTrimTo(pool, 0): %s reserved; the device's free memory rose by %s\n",
              bytes(trimmed).c_str(),
              freeTrimmed > freeHeld ? wb::bytes(freeTrimmed - freeHeld).c_str() : "NOTHING");
  wb::expect(trimmed < kBig && freeTrimmed > freeHeld, "the trim giving the block back", "it was kept");
  cuuint64_t reset = 0;  // a watermark can be set to 0 only, which resets it to the current value
  CU_CHECK(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &reset));
  CU_CHECK(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH, &reset));
  const cuuint64_t usedNow = poolStat(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH),
                   reservedNow = poolStat(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH);
  std::printf("watermarks reset: USED_MEM_HIGH %s, RESERVED_MEM_HIGH %s\n", bytes(usedNow).c_str(),
              bytes(reservedNow).c_str());
  wb::expect(usedNow == 0 && reservedNow == trimmed, "the watermarks reset to the current values",
             "other values");
  CU_CHECK(cuMemPoolDestroy(pool));
  CU_CHECK(cuStreamDestroy(s));
}
//! [statistics]

//! [reuse-same]
// A block freed in a stream may serve the next allocation in that stream at once (the guide: it
// "can"): the stream's own order puts every use of the old block before the new one. On driver 580 it
// did, with all of it still pending behind the gate.
void reuseInSameStream(const Kernels& k, CUdevice dev, CUstream a) {
  CUmemoryPool pool = createPool(dev);
  CUdeviceptr first = 0, second = 0;
  {
    wb::Gate gate(k.gate, a);
    CU_CHECK(cuMemAllocFromPoolAsync(&first, kBlock, pool, a));
    const cuuint64_t one = reservedIn(pool);
    CU_CHECK(cuMemFreeAsync(first, a));
    CU_CHECK(cuMemAllocFromPoolAsync(&second, kBlock, pool, a));
    const cuuint64_t now = reservedIn(pool);
    std::printf("%-32s %s; the pool reserves %s\n", "A again, gate closed:", sameOrNew(first, second),
                bytes(now).c_str());
    observed(second == first && now == one, "the block reused by the stream that freed it");
    CU_CHECK(cuMemFreeAsync(second, a));
    gate.open();
    CU_CHECK(cuStreamSynchronize(a));
  }
  CU_CHECK(cuMemPoolDestroy(pool));
}
//! [reuse-same]

//! [reuse-unordered]
// B allocates while A's free is still pending behind the gate, and nothing orders B after A: giving
// B that block would be safe only with a dependency on A's free. On driver 580 the pool mapped a new
// one, and B waited for nothing: it finished (its synchronisation returned) with A's gate still closed.
void noReuseUnordered(const Kernels& k, CUdevice dev, CUstream a, CUstream b) {
  CUmemoryPool pool = createPool(dev);
  CUdeviceptr first = 0, second = 0;
  {
    wb::Gate gate(k.gate, a);
    CU_CHECK(cuMemAllocFromPoolAsync(&first, kBlock, pool, a));
    CU_CHECK(cuMemFreeAsync(first, a));
    CU_CHECK(cuMemAllocFromPoolAsync(&second, kBlock, pool, b));
    CU_CHECK(cuMemFreeAsync(second, b));
    CU_CHECK(cuStreamSynchronize(b));  // bounded: a gate gives up at its deadline
    const bool gated = gate.outcome() == wb::Gate::Waiting;
    std::printf("%-32s %s; B finished with A's gate still %s\n", "B, no order, A's free pending:",
                sameOrNew(first, second), gated ? "closed" : "NOT closed");
    observed(second != first && gated, "a new block for B, which waited for nothing");
    gate.open();
    CU_CHECK(cuStreamSynchronize(a));
  }
  CU_CHECK(cuMemPoolDestroy(pool));
}
//! [reuse-unordered]

//! [reuse-event]
// A records an event after its free and B waits on it: B's allocation comes after A's free in the
// stream order, and REUSE_FOLLOW_EVENT_DEPENDENCIES lets the pool follow that dependency (on driver
// 580 it did) unless it is turned off.
void reuseAfterEvent(const Kernels& k, CUdevice dev, CUstream a, CUstream b, bool follow) {
  CUmemoryPool pool = createPool(dev);
  setPolicy(pool, CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES, follow);
  CUevent freed = nullptr;
  CU_CHECK(cuEventCreate(&freed, CU_EVENT_DISABLE_TIMING));
  CUdeviceptr first = 0, second = 0;
  {
    wb::Gate gate(k.gate, a);
    CU_CHECK(cuMemAllocFromPoolAsync(&first, kBlock, pool, a));
    CU_CHECK(cuMemFreeAsync(first, a));
    CU_CHECK(cuEventRecord(freed, a));
    CU_CHECK(cuStreamWaitEvent(b, freed, 0));
    CU_CHECK(cuMemAllocFromPoolAsync(&second, kBlock, pool, b));
    std::printf("%-32s %s\n", follow ? "B after A's event, follow on:" : "B after A's event, follow off:",
                sameOrNew(first, second));
    observed((second == first) == follow,
             follow ? "B reusing A's block through the event" : "a new block for B");
    CU_CHECK(cuMemFreeAsync(second, b));
    gate.open();
    CU_CHECK(cuStreamSynchronize(b));  // B waits for A through the event
  }
  CU_CHECK(cuEventDestroy(freed));
  CU_CHECK(cuMemPoolDestroy(pool));
}
//! [reuse-event]

//! [opportunistic]
// Nothing orders B after A, but A has already passed its free when B allocates. The host knows it
// from a stamp A wrote after the free, read from pinned memory: no CUDA call, no synchronisation.
// Only REUSE_ALLOW_OPPORTUNISTIC lets the pool act on what the device has already done.
void reuseOpportunistic(const Kernels& k, CUdevice dev, CUstream a, CUstream b, wb::PinnedWords& stamps,
                        bool allowed) {
  CUmemoryPool pool = createPool(dev);
  setPolicy(pool, CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC, allowed);
  stamps.write(1, 0);
  CUdeviceptr first = 0, second = 0;
  CU_CHECK(cuMemAllocFromPoolAsync(&first, kBlock, pool, a));
  CU_CHECK(cuMemFreeAsync(first, a));
  stampIn(k, stamps, 1, a);  // runs after the free
  const bool passed = waitForWord(stamps, 1);
  CU_CHECK(cuMemAllocFromPoolAsync(&second, kBlock, pool, b));
  CU_CHECK(cuMemFreeAsync(second, b));
  CU_CHECK(cuStreamSynchronize(a));
  CU_CHECK(cuStreamSynchronize(b));
  std::printf("%-44s %s\n",
              allowed ? "B, A past its free, opportunistic on:"
                      : "B, A past its free, opportunistic off:",
              sameOrNew(first, second));
  wb::expect(passed, "A's stamp, which shows A past its free", "it never came");
  observed((second == first) == allowed,
           allowed ? "B reusing the block A had already freed" : "a new block for B");
  CU_CHECK(cuMemPoolDestroy(pool));
}
//! [opportunistic]

//! [internal]
// A pool that may hold one block only (maxSize). B asks for a block while A's free is pending behind
// the gate, with nothing ordering B after A, and the pool cannot map another. With
// REUSE_ALLOW_INTERNAL_DEPENDENCIES it gives B A's block and makes B wait for A's free; without, the
// allocation is refused. A stamp in C, independent of both, shows that the GPU was free to run B's.
void reuseInternal(const Kernels& k, CUdevice dev, CUstream a, CUstream b, CUstream c,
                   wb::PinnedWords& stamps, bool allowed) {
  CUmemoryPool pool = createPool(dev, kBlock);
  setPolicy(pool, CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES, allowed);
  stamps.write(1, 0);
  stamps.write(2, 0);
  CUdeviceptr first = 0, second = 0;
  wb::Gate gate(k.gate, a);
  CU_CHECK(cuMemAllocFromPoolAsync(&first, kBlock, pool, a));
  CU_CHECK(cuMemFreeAsync(first, a));
  const CUresult rc = cuMemAllocFromPoolAsync(&second, kBlock, pool, b);
  bool bWaits = false;
  if (rc == CUDA_SUCCESS) {
    stampIn(k, stamps, 1, b);
    stampIn(k, stamps, 2, c);
    CU_CHECK(cuStreamSynchronize(c));
    bWaits = stamps.read(2) != 0 && stamps.read(1) == 0 && cuStreamQuery(b) == CUDA_ERROR_NOT_READY;
    CU_CHECK(cuMemFreeAsync(second, b));
  }
  //! [internal]
  //! [internal-2]
  if (allowed)
    std::printf("%-44s %s, %s; C's stamp ran, B's %s\n",
                "B, pool full, internal dependencies on:", wb::errorName(rc).c_str(),
                sameOrNew(first, second), bWaits ? "waits for A's gate" : "DID NOT WAIT");
  else
    std::printf("%-44s %s\n", "B, pool full, internal dependencies off:", wb::errorName(rc).c_str());
  // With the policy off, the pool's one block is pending a free no order reaches: nothing to give.
  if (!allowed) wb::expect(rc != CUDA_SUCCESS, "the allocation refused", wb::errorName(rc));
  else
    observed(rc == CUDA_SUCCESS && second == first && bWaits,
             "B given A's block, and made to wait for A's free");
  gate.open();
  CU_CHECK(cuStreamSynchronize(a));
  CU_CHECK(cuStreamSynchronize(b));
  CU_CHECK(cuMemPoolDestroy(pool));
}
//! [internal-2]

CUcontext contextOf(CUdeviceptr p) {
  CUcontext owner = nullptr;
  CU_CHECK(cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_CONTEXT, p));
  return owner;
}

//! [ctx-destroy]
// In a context of its own, one cuMemAlloc and one block from a pool; the context is destroyed with
// the block still allocated. The pool still counts it in use: only an explicit free gives it back.
void contextDestroy(CUdevice dev) {
  CUmemoryPool pool = createPool(dev);
  CUcontext ctx = nullptr;
  CU_CHECK(wb::createContext(&ctx, 0, dev));  // pushed: current from here on
  CUstream s = newStream();
  CUdeviceptr plain = 0, pooled = 0;
  CU_CHECK(cuMemAlloc(&plain, 4096));
  CU_CHECK(cuMemAllocFromPoolAsync(&pooled, kBig, pool, s));
  CU_CHECK(cuStreamSynchronize(s));
  std::printf("CU_POINTER_ATTRIBUTE_CONTEXT: cuMemAlloc's pointer %s, the pool's block %s\n",
              contextOf(plain) == ctx ? "the new context" : "ANOTHER",
              contextOf(pooled) ? "A CONTEXT" : "NULL");
  wb::expect(contextOf(plain) == ctx && contextOf(pooled) == nullptr,
             "the pool's block belonging to no context", "another owner");
  CU_CHECK(cuMemFree(plain));
  CU_CHECK(cuStreamDestroy(s));
  CU_CHECK(cuCtxDestroy(ctx));  // pops it: the primary context is current again
  const cuuint64_t used = poolStat(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT);
  std::printf("after cuCtxDestroy the pool counts %s in use, %s reserved\n", bytes(used).c_str(),
              bytes(reservedIn(pool)).c_str());
  wb::expect(used >= kBig, "the block outliving its context", "the pool counts it free");
  //! [ctx-destroy]

  //! [ctx-destroy-free]
  CUstream free = newStream();  // in the primary context, current again
  CU_CHECK(cuMemFreeAsync(pooled, free));
  CU_CHECK(cuStreamSynchronize(free));
  CU_CHECK(cuStreamDestroy(free));
  const cuuint64_t after = poolStat(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT);
  std::printf("after cuMemFreeAsync in another context's stream, synchronised: %s in use\n",
              bytes(after).c_str());
  wb::expect(after == 0, "the explicit free giving the block back", "it is still in use");
  CU_CHECK(cuMemPoolDestroy(pool));
  //! [ctx-destroy-free]
}

const char* accessName(CUmemAccess_flags f) {
  return f == CU_MEM_ACCESS_FLAGS_PROT_READWRITE ? "read-write" : f == CU_MEM_ACCESS_FLAGS_PROT_NONE ? "none" : "read";
}

CUmemAccess_flags accessFrom(CUmemoryPool pool, CUdevice dev) {
  CUmemLocation where{};
  where.type = CU_MEM_LOCATION_TYPE_DEVICE;
  where.id = dev;
  CUmemAccess_flags flags = CU_MEM_ACCESS_FLAGS_PROT_NONE;
  CU_CHECK(cuMemPoolGetAccess(&flags, pool, &where));
  return flags;
}

//! [peer-access]
// A pool's memory is reachable from its own device only, whatever peer access contexts enable,
// until cuMemPoolSetAccess grants another device. Then a kernel on device 1 writes into it.
void peerAccess(const Kernels& k, CUdevice dev0, CUcontext primary0) {
  int count = 0, can = 0;
  CU_CHECK(cuDeviceGetCount(&count));
  CUdevice dev1 = 0;
  if (count >= 2) CU_CHECK(cuDeviceGet(&dev1, 1));
  if (count >= 2) CU_CHECK(cuDeviceCanAccessPeer(&can, dev1, dev0));
  if (!can) {
    std::printf("skipped: %s; with two peer devices this step shows device 1 without access to "
                "device 0's pool until cuMemPoolSetAccess, then a kernel on device 1 writing into it\n",
                count < 2 ? "this machine has one device" : "device 1 cannot access device 0's memory");
    return;
  }
  CUmemoryPool pool = createPool(dev0);
  const CUmemAccess_flags own = accessFrom(pool, dev0), before = accessFrom(pool, dev1);
  CUmemAccessDesc grant{};
  grant.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  grant.location.id = dev1;
  grant.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  CU_CHECK(cuMemPoolSetAccess(pool, &grant, 1));
  const CUmemAccess_flags after = accessFrom(pool, dev1);
  std::printf("access to device 0's pool: from device 0 %s; from device 1 %s, after cuMemPoolSetAccess %s\n",
              accessName(own), accessName(before), accessName(after));
  wb::expect(own == CU_MEM_ACCESS_FLAGS_PROT_READWRITE && before == CU_MEM_ACCESS_FLAGS_PROT_NONE &&
                 after == CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
             "access for the pool's device only, until granted", "other access");
  //! [peer-access]
  //! [peer-kernel]
  unsigned n = 1u << 16, rounds = 1;
  CUstream s = newStream();
  CUdeviceptr data = 0;
  CU_CHECK(cuMemAllocFromPoolAsync(&data, n * sizeof(float), pool, s));
  CU_CHECK(cuMemsetD32Async(data, 0, n, s));
  CU_CHECK(cuStreamSynchronize(s));
  CUcontext primary1 = nullptr;
  CU_CHECK(cuDevicePrimaryCtxRetain(&primary1, dev1));
  CU_CHECK(cuCtxSetCurrent(primary1));
  void* args[] = {&data, &n, &rounds};  // burn: each value becomes 0 * 0.999 + 0.001
  CU_CHECK(cuLaunchKernel(k.burn, n / 256, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr));
  CU_CHECK(cuCtxSynchronize());
  CU_CHECK(cuCtxSetCurrent(primary0));
  CU_CHECK(cuDevicePrimaryCtxRelease(dev1));
  std::vector<float> back(n);
  CU_CHECK(cuMemcpyDtoH(back.data(), data, n * sizeof(float)));
  const float expected = 0.0f * 0.999f + 0.001f;
  const auto wrong = std::count_if(back.begin(), back.end(), [&](float v) { return v != expected; });
  std::printf("a kernel on device 1 wrote device 0's pool memory: %ld of %u values wrong\n",
              static_cast<long>(wrong), n);
  wb::expect(wrong == 0, "device 1 writing the pool's memory once granted", "wrong values");
  CU_CHECK(cuMemFreeAsync(data, s));
  CU_CHECK(cuStreamSynchronize(s));
  CU_CHECK(cuStreamDestroy(s));
  CU_CHECK(cuMemPoolDestroy(pool));
}
//! [peer-kernel]

struct Cost {
  size_t bytes;
  double plainUs, pooledUs;
};

//! [median]
// The median host time of one allocation plus its free, in microseconds: 21 after 3 warm-ups.
template <class AllocAndFree>
double medianUs(AllocAndFree&& allocAndFree) {
  constexpr int kWarmup = 3, kRepeats = 21;
  std::vector<double> us;
  for (int i = 0; i < kWarmup + kRepeats; ++i) {
    const wb::Stopwatch clock;
    allocAndFree();
    if (i >= kWarmup) us.push_back(clock.ms() * 1000.0);
  }
  std::sort(us.begin(), us.end());
  return us[us.size() / 2];
}
//! [median]

//! [cost]
// For each size, cuMemAlloc + cuMemFree against cuMemAllocFromPoolAsync + cuMemFreeAsync from a pool
// that keeps what it reserves (its warm-ups fill it). The pool's pair only enqueues: the host time is
// what a request pays. Trimming between sizes starts each from an empty pool.
std::vector<Cost> allocationCost(CUdevice dev) {
  CUmemoryPool pool = createPool(dev);
  cuuint64_t keepAll = UINT64_MAX;
  CU_CHECK(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &keepAll));
  CUstream s = newStream();
  std::vector<Cost> costs;
  for (size_t size = 4u << 10; size <= (256u << 20); size *= 4) {
    CUdeviceptr p = 0;
    const double plain = medianUs([&] {
      CU_CHECK(cuMemAlloc(&p, size));
      CU_CHECK(cuMemFree(p));
    });
    const double pooled = medianUs([&] {
      CU_CHECK(cuMemAllocFromPoolAsync(&p, size, pool, s));
      CU_CHECK(cuMemFreeAsync(p, s));
    });
    CU_CHECK(cuStreamSynchronize(s));
    CU_CHECK(cuMemPoolTrimTo(pool, 0));
    costs.push_back({size, plain, pooled});
  }
  CU_CHECK(cuMemPoolDestroy(pool));
  CU_CHECK(cuStreamDestroy(s));
  return costs;
}
//! [cost]

//! [cost-table]
void reportCost(const std::vector<Cost>& costs) {
  std::printf("Host time of one allocation plus its free, microseconds (median of 21 after 3 warm-ups):\n");
  std::printf("  %10s  %21s  %12s  %8s\n", "size", "cuMemAlloc+cuMemFree", "pool (warm)", "ratio");
  for (const Cost& c : costs)
    std::printf("  %10s  %21.2f  %12.2f  %7.1fx\n", wb::bytes(c.bytes).c_str(), c.plainUs, c.pooledUs,
                c.plainUs / c.pooledUs);
  const Cost& largest = costs.back();
  wb::expect(largest.pooledUs < largest.plainUs, "the warm pool cheaper than cuMemAlloc + cuMemFree at " +
             wb::bytes(largest.bytes), "the pool was not cheaper there");
}
//! [cost-table]

wb::FigureTable tableOf(const std::vector<Cost>& costs) {
  wb::FigureTable table("bytes,way,microseconds");
  for (const Cost& c : costs) {
    table.row("%zu,cuMemAlloc+cuMemFree,%.3f", c.bytes, c.plainUs);
    table.row("%zu,pool (warm),%.3f", c.bytes, c.pooledUs);
  }
  return table;
}

int main(int argc, char** argv) {
  wb::FigurePaths paths;
  if (!wb::parseFigureArgs(argc, argv, paths, "lesson13-figure.csv")) return wb::kExitUsage;
  try {
    wb::checkEnvironment({
        {"CUDA_LAUNCH_BLOCKING", wb::Under::Stops,
         "every launch would wait for its kernel: the gate kernel's launch would wait for the gate, and nothing is ever pending"},
        {"CUDA_DEVICE_MAX_CONNECTIONS", wb::Under::Stops,
         "streams would share work queues, so a stream's work could wait behind another's gate (false dependencies)",
         wb::belowDefault},
    });
    // The image is checked before the driver starts: a damaged one stops the program in a moment.
    const std::string image = wb::verifiedImagePath("streams.fatbin");
    CU_CHECK(cuInit(0));
    CUdevice dev = 0;
    CU_CHECK(cuDeviceGet(&dev, 0));
    CUcontext primary = nullptr;
    CU_CHECK(cuDevicePrimaryCtxRetain(&primary, dev));
    CU_CHECK(cuCtxSetCurrent(primary));
    CUlibrary library = nullptr;
    CU_CHECK(cuLibraryLoadFromFile(&library, image.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0));
    const Kernels k = Kernels::load(library);  // every kernel loaded before any gate closes
    // Under compute-sanitizer (WORKBOOK_UNDER_SANITIZER), on driver 580, no kernel ran beside a waiting
    // gate (lesson 09), and timings mean nothing: the steps that need either say so instead.
    const bool sanitized = wb::underSanitizer();
    const char* leftOut = "left out under compute-sanitizer, which runs one kernel at a time and slows every call\n";
    std::vector<Cost> costs;
    {
      wb::PinnedWords stamps(4);  // [0] the stamp counter, [1..3] slots
      CUstream a = newStream(), b = newStream(), c = newStream();
      wb::step(1, "The device's default pool");
      const CUmemoryPool byDefault = defaultPool(dev);
      wb::step(2, "Allocating and freeing in stream order");
      streamOrder(k);
      wb::step(3, "A pool of your own");
      ownPool(dev, byDefault);
      wb::step(4, "The release threshold");
      releaseThreshold(dev);
      wb::step(5, "Reuse across streams follows the stream order");
      if (sanitized) {
        std::printf("%s", leftOut);
      } else {
        reuseInSameStream(k, dev, a);
        noReuseUnordered(k, dev, a, b);
        reuseAfterEvent(k, dev, a, b, true);
        reuseAfterEvent(k, dev, a, b, false);
      }
      wb::step(6, "The policies that allow more reuse");
      if (sanitized) {
        std::printf("%s", leftOut);
      } else {
        reuseOpportunistic(k, dev, a, b, stamps, true);
        reuseOpportunistic(k, dev, a, b, stamps, false);
#if CUDA_VERSION >= 12060
        reuseInternal(k, dev, a, b, c, stamps, true);
        reuseInternal(k, dev, a, b, c, stamps, false);
#else
        std::printf("internal dependencies: left out, this CUDA header has no CUmemPoolProps::maxSize to cap a pool\n");
#endif
      }
      wb::step(7, "What cuCtxDestroy does not free");
      contextDestroy(dev);
      wb::step(8, "Another device's access to a pool");
      peerAccess(k, dev, primary);
      wb::step(9, "A warm pool against cuMemAlloc, per call");
      if (sanitized) {
        std::printf("%s", leftOut);
      } else {
        costs = allocationCost(dev);
        reportCost(costs);
      }
      for (CUstream s : {a, b, c}) CU_CHECK(cuStreamDestroy(s));
    }
    CU_CHECK(cuLibraryUnload(library));
    CU_CHECK(cuCtxSetCurrent(nullptr));
    CU_CHECK(cuDevicePrimaryCtxRelease(dev));

    return tableOf(costs).save(paths.csv, 9);
  } catch (...) {
    return wb::reportFatal(std::current_exception());
  }
}
