// The checks of lesson 32's exercises (lessons/32-sleep-and-wake/exercises.cpp). What a region holds
// is read from the ledger (tests/exercises/ledger.hpp: reservations, handles and mappings made and
// given back) and from the driver (cuMemGetAccess, the bytes at the region's addresses); failure
// paths use the ledger's FailCall; a stream with pending work is held by the gate kernel (lesson
// 09), so nothing here depends on timing. Each case's name begins with the requirements it verifies.
#include "check.hpp"
#include "32-sleep-and-wake/exercises.hpp"
#include "gate.hpp"
#include "graph_handles.hpp"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

// Granting access and reading it back are calls the ledger does not stand before: counted here, and
// able to fail on demand.
WBX_INTERPOSE(cuMemSetAccess, (CUdeviceptr ptr, size_t size, const CUmemAccessDesc* desc, size_t count),
              (ptr, size, desc, count))

namespace {

using ex32::Region;
using wbt::Stream;
using wbx::Held;

constexpr size_t kMiB = size_t{1} << 20;

// The primary context of device 0, current, and the gate and vector_ops' scale, loaded before any
// gate closes or capture begins.
struct Lab {
  wbt::RetainedPrimary primary{(wbt::initDriver(), wbt::device(0))};
  wbt::Pushed current{primary.get()};
  CUdevice dev = wbt::device(0);
  CUlibrary streams = nullptr, vec = nullptr;
  wb::StreamKernels k;
  CUfunction scale = nullptr;
  Lab() {
    if (!wbt::attribute(dev, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED))
      throw wbx::Skipped("device 0 does not support virtual memory management (cuMemCreate)");
    CU_CHECK(cuLibraryLoadFromFile(&streams, wb::verifiedImagePath("streams.fatbin").c_str(), nullptr, nullptr, 0,
                                   nullptr, nullptr, 0));
    CU_CHECK(cuLibraryLoadFromFile(&vec, wb::verifiedImagePath("vector_ops.fatbin").c_str(), nullptr, nullptr, 0,
                                   nullptr, nullptr, 0));
    k = wb::StreamKernels::load(streams);
    scale = wbt::functionOf(vec, "scale");
  }
  ~Lab() {
    cuLibraryUnload(vec);
    cuLibraryUnload(streams);
  }
  Lab(const Lab&) = delete;
  Lab& operator=(const Lab&) = delete;
};

size_t granularity(CUdevice dev) {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = dev;
  size_t granule = 0;
  CU_CHECK(cuMemGetAllocationGranularity(&granule, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  return granule;
}

// Whether dev may read and write at p, as cuMemGetAccess says (false where nothing is mapped).
bool readWrite(CUdevice dev, CUdeviceptr p) {
  CUmemLocation where{};
  where.type = CU_MEM_LOCATION_TYPE_DEVICE;
  where.id = dev;
  unsigned long long flags = 0;
  return cuMemGetAccess(&flags, &where, p) == CUDA_SUCCESS && flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
}

// Pinned host memory of the check's own, zeroed.
class Pinned {
 public:
  explicit Pinned(size_t bytes) : bytes_(bytes) {
    CU_CHECK(cuMemAllocHost(&p_, bytes));
    std::memset(p_, 0, bytes);
  }
  ~Pinned() { cuMemFreeHost(p_); }
  Pinned(const Pinned&) = delete;
  Pinned& operator=(const Pinned&) = delete;
  void* get() const { return p_; }
  uint32_t* words() const { return static_cast<uint32_t*>(p_); }
  size_t words_count() const { return bytes_ / 4; }

 private:
  void* p_ = nullptr;
  size_t bytes_;
};

// The pattern of seed over a region's words, written through a pinned staging buffer, and read back.
void writePattern(const Region& r, uint32_t seed) {
  Pinned staging(r.size);
  for (size_t i = 0; i < staging.words_count(); ++i) staging.words()[i] = wbt::patternAt(seed, i);
  CU_CHECK(cuMemcpyHtoD(r.base, staging.get(), r.size));
}
bool holdsPattern(const void* host, size_t bytes, uint32_t seed) {
  const uint32_t* w = static_cast<const uint32_t*>(host);
  for (size_t i = 0; i < bytes / 4; ++i)
    if (w[i] != wbt::patternAt(seed, i)) return false;
  return true;
}
bool regionHoldsPattern(const Region& r, uint32_t seed) {
  Pinned back(r.size);
  CU_CHECK(cuMemcpyDtoH(back.get(), r.base, r.size));
  return holdsPattern(back.get(), r.size, seed);
}

// A region the check gives back whatever the code under check left in it (mapping, handle,
// reservation), by the driver's own calls: a wrong freeRegion must not make the next case leak.
struct Guard {
  Region& r;
  ~Guard() {
    if (r.handle) {
      cuMemUnmap(r.base, r.size);
      cuMemRelease(r.handle);
    }
    if (r.base) cuMemAddressFree(r.base, r.size);
  }
};

// The check's own sleep (unmap and release, the reservation kept), to test freeRegion and wakeRegion
// alone.
void sleepByHand(Region& r) {
  CU_CHECK(cuMemUnmap(r.base, r.size));
  CU_CHECK(cuMemRelease(r.handle));
  r.handle = 0;
}

// What wb::DriverError a call threw, or CUDA_SUCCESS where it threw none.
template <typename F>
CUresult driverErrorOf(F&& f) {
  try {
    f();
  } catch (const wb::DriverError& e) {
    return e.code();
  }
  return CUDA_SUCCESS;
}

}  // namespace

EXERCISE("map-region", "A region whose addresses outlive its memory",
         "Round up to cuMemGetAllocationGranularity(MINIMUM); cuMemAddressReserve, cuMemCreate (keep the handle), "
         "cuMemMap, cuMemSetAccess(READWRITE). freeRegion: cuMemUnmap and cuMemRelease only while handle != 0, "
         "cuMemAddressFree always. On a failure, undo the calls that succeeded, in reverse.") {
  TEST_CASE("R1 R2: a region of the granularity + 4 KiB is two granules, read-write throughout, holds a pattern, and freeRegion gives it all back") {
    Lab lab;
    const size_t granule = granularity(lab.dev);
    const wbx::Holdings before = wbx::holdings();
    Region r = ex32::mapRegion(lab.dev, granule + 4096);
    Guard guard{r};
    const wbx::Holdings mapped = wbx::holdings();
    CHECK(r.size == 2 * granule);
    CHECK(r.device == lab.dev);
    CHECK(r.handle != 0);
    CHECK(mapped[Held::Reservations] == before[Held::Reservations] + 1);
    CHECK(mapped[Held::MemHandles] == before[Held::MemHandles] + 1);
    CHECK(mapped[Held::Mappings] == before[Held::Mappings] + 1);
    REQUIRE_MESSAGE(readWrite(lab.dev, r.base), "no read-write access at the region's first byte (cuMemSetAccess?)");
    REQUIRE_MESSAGE(readWrite(lab.dev, r.base + r.size - 1), "no read-write access at the region's last byte");
    writePattern(r, 7);
    CHECK(regionHoldsPattern(r, 7));
    ex32::freeRegion(r);
    CHECK_MESSAGE(wbx::holdings().differenceFrom(before).empty(),
                  ("freeRegion left: " + wbx::holdings().differenceFrom(before)));
    CHECK(r.base == 0);
    CHECK(r.handle == 0);
  }

  TEST_CASE("R2: freeRegion gives back a sleeping region (no handle, no mapping): its reservation") {
    Lab lab;
    const wbx::Holdings before = wbx::holdings();
    Region r = ex32::mapRegion(lab.dev, 2 * kMiB);
    Guard guard{r};
    sleepByHand(r);
    CHECK_NOTHROW(ex32::freeRegion(r));
    CHECK_MESSAGE(wbx::holdings().differenceFrom(before).empty(),
                  ("freeRegion of a sleeping region left: " + wbx::holdings().differenceFrom(before)));
  }

  TEST_CASE("R3: when cuMemCreate, cuMemMap or cuMemSetAccess fails, mapRegion throws wb::DriverError and holds nothing") {
    Lab lab;
    for (const char* call : {"cuMemCreate", "cuMemMap", "cuMemSetAccess"}) {
      CAPTURE(call);
      const wbx::Holdings before = wbx::holdings();
      Region r;
      CUresult code = CUDA_SUCCESS;
      {
        wbx::FailCall fail(call, CUDA_ERROR_OUT_OF_MEMORY);
        code = driverErrorOf([&] { r = ex32::mapRegion(lab.dev, 2 * kMiB); });
        CHECK(fail.fired());
      }
      Guard guard{r};
      CHECK_MESSAGE(code == CUDA_ERROR_OUT_OF_MEMORY, "expected wb::DriverError with the failed call's code");
      CHECK_MESSAGE(wbx::holdings().differenceFrom(before).empty(),
                    (std::string("after ") + call + " failed, mapRegion left: " + wbx::holdings().differenceFrom(before)));
    }
  }
}

EXERCISE("sleep-region", "Sleep: save, unmap, release, keep the addresses",
         "if (!handle) return; copy with cuMemcpyDtoH (it returns when the bytes are in host memory) and only "
         "then cuMemUnmap(base, size) and cuMemRelease(handle); set handle = 0. Never cuMemAddressFree here.") {
  TEST_CASE("R1 R2 R3: the region's bytes are saved, its memory unmapped and released, its addresses kept and mappable again") {
    Lab lab;
    const wbx::Holdings before = wbx::holdings();
    Region r = ex32::mapRegion(lab.dev, 4 * kMiB);
    Guard guard{r};
    writePattern(r, 11);
    Pinned saved(r.size);
    const CUdeviceptr base = r.base;
    const size_t size = r.size;
    const wbx::Holdings awake = wbx::holdings();
    ex32::sleepRegion(r, saved.get());
    const wbx::Holdings asleep = wbx::holdings();
    CHECK_MESSAGE(holdsPattern(saved.get(), size, 11), "saveTo does not hold the region's bytes");
    CHECK(r.handle == 0);
    CHECK_MESSAGE(asleep[Held::MemHandles] == before[Held::MemHandles], "the handle was not released");
    CHECK_MESSAGE(asleep[Held::Mappings] == before[Held::Mappings], "the range is still mapped");
    CHECK_MESSAGE(asleep[Held::Reservations] == awake[Held::Reservations], "the reservation was freed");
    CHECK(r.base == base);
    CHECK(r.size == size);
    // The addresses are still the region's: memory maps there again.
    CUmemAllocationProp prop{};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = lab.dev;
    CU_CHECK(cuMemCreate(&r.handle, r.size, &prop, 0));
    CHECK_MESSAGE(cuMemMap(r.base, r.size, 0, r.handle, 0) == CUDA_SUCCESS, "memory did not map at the kept base");
  }

  TEST_CASE("R2 R3 R5: a region discarded (saveTo nullptr) is released with its addresses kept; a second sleep changes nothing") {
    Lab lab;
    Region r = ex32::mapRegion(lab.dev, 2 * kMiB);
    Guard guard{r};
    const wbx::Holdings awake = wbx::holdings();
    ex32::sleepRegion(r, nullptr);
    CHECK(r.handle == 0);
    const wbx::Holdings asleep = wbx::holdings();
    CHECK(asleep[Held::MemHandles] == awake[Held::MemHandles] - 1);
    CHECK(asleep[Held::Mappings] == awake[Held::Mappings] - 1);
    CHECK(asleep[Held::Reservations] == awake[Held::Reservations]);
    const CUdeviceptr base = r.base;
    CHECK_NOTHROW(ex32::sleepRegion(r, nullptr));
    CHECK(r.base == base);
    CHECK(r.handle == 0);
    CHECK_MESSAGE(wbx::holdings().differenceFrom(asleep).empty(), "the second sleep changed what is held");
  }

  TEST_CASE("R4: when the save fails, sleepRegion throws wb::DriverError and the region stays mapped with its contents") {
    Lab lab;
    Region r = ex32::mapRegion(lab.dev, 2 * kMiB);
    Guard guard{r};
    writePattern(r, 5);
    Pinned saved(r.size);
    const CUmemGenericAllocationHandle handle = r.handle;
    const wbx::Holdings awake = wbx::holdings();
    CUresult code = CUDA_SUCCESS;
    {
      wbx::FailCall fail("cuMemcpyDtoH", CUDA_ERROR_UNKNOWN);  // the ledger fails one entry point at a time
      code = driverErrorOf([&] { ex32::sleepRegion(r, saved.get()); });
      REQUIRE_MESSAGE(fail.fired(), "sleepRegion did not save with cuMemcpyDtoH");
    }
    CHECK(code == CUDA_ERROR_UNKNOWN);
    CHECK(r.handle == handle);
    CHECK_MESSAGE(wbx::holdings().differenceFrom(awake).empty(),
                  ("after a failed save: " + wbx::holdings().differenceFrom(awake)));
    REQUIRE_MESSAGE(readWrite(lab.dev, r.base), "the region is no longer mapped and accessible");
    CHECK(regionHoldsPattern(r, 5));
  }
}

EXERCISE("wake-region", "Wake: the same addresses, memory again, the contents restored",
         "if (handle) return; cuMemCreate(size, on region.device), cuMemMap at region.base, cuMemSetAccess again "
         "(a new mapping has no access), then cuMemcpyHtoD from restoreFrom. On a failure: cuMemUnmap if mapped, "
         "cuMemRelease, throw.") {
  TEST_CASE("R1 R2: a region woken from its saved copy is at the same base, with a new handle, read-write, holding what was saved") {
    Lab lab;
    Region r = ex32::mapRegion(lab.dev, 4 * kMiB);
    Guard guard{r};
    writePattern(r, 3);
    Pinned saved(r.size);
    sleepByHand(r);
    // What is restored differs from what the region held before its sleep, so memory that came back
    // with the old bytes in it cannot pass for a restore.
    for (size_t i = 0; i < saved.words_count(); ++i) saved.words()[i] = wbt::patternAt(4, i);
    const wbx::Holdings asleep = wbx::holdings();
    const CUdeviceptr base = r.base;
    ex32::wakeRegion(r, saved.get());
    const wbx::Holdings awake = wbx::holdings();
    CHECK(r.base == base);
    CHECK(r.handle != 0);
    CHECK_MESSAGE(awake[Held::Reservations] == asleep[Held::Reservations], "a new reservation: the graphs' addresses are lost");
    CHECK(awake[Held::MemHandles] == asleep[Held::MemHandles] + 1);
    CHECK(awake[Held::Mappings] == asleep[Held::Mappings] + 1);
    REQUIRE_MESSAGE(readWrite(lab.dev, r.base), "no read-write access after the wake (cuMemSetAccess again?)");
    REQUIRE_MESSAGE(readWrite(lab.dev, r.base + r.size - 1), "no read-write access at the last byte");
    CHECK_MESSAGE(regionHoldsPattern(r, 4), "the region does not hold what restoreFrom held");
  }

  TEST_CASE("R3: waking an awake region changes nothing") {
    Lab lab;
    Region r = ex32::mapRegion(lab.dev, 2 * kMiB);
    Guard guard{r};
    writePattern(r, 9);
    const Region was = r;
    const wbx::Holdings awake = wbx::holdings();
    CHECK_NOTHROW(ex32::wakeRegion(r, nullptr));
    CHECK(r.handle == was.handle);
    CHECK(r.base == was.base);
    CHECK(wbx::holdings().differenceFrom(awake).empty());
    CHECK(regionHoldsPattern(r, 9));
  }

  TEST_CASE("R4: when cuMemMap, cuMemSetAccess or the restoring copy fails, wakeRegion throws wb::DriverError, stays asleep and holds nothing more; it wakes afterwards") {
    Lab lab;
    Region r = ex32::mapRegion(lab.dev, 2 * kMiB);
    Guard guard{r};
    Pinned saved(r.size);
    sleepByHand(r);
    const wbx::Holdings asleep = wbx::holdings();
    for (const char* call : {"cuMemMap", "cuMemSetAccess", "cuMemcpyHtoD"}) {
      CAPTURE(call);
      CUresult code = CUDA_SUCCESS;
      {
        wbx::FailCall fail(call, CUDA_ERROR_OUT_OF_MEMORY);
        code = driverErrorOf([&] { ex32::wakeRegion(r, saved.get()); });
        CHECK_MESSAGE(fail.fired(), (std::string("wakeRegion did not call ") + call));
      }
      CHECK_MESSAGE(code == CUDA_ERROR_OUT_OF_MEMORY, "expected wb::DriverError with the failed call's code");
      CHECK(r.handle == 0);
      CHECK_MESSAGE(wbx::holdings().differenceFrom(asleep).empty(),
                    (std::string("after ") + call + " failed, wakeRegion left: " + wbx::holdings().differenceFrom(asleep)));
      if (r.handle) sleepByHand(r);  // a wrong answer, put back to asleep for the next call
    }
    ex32::wakeRegion(r, saved.get());
    CHECK(r.handle != 0);
  }
}

EXERCISE("sleep-when-idle", "Refuse to sleep while a stream still uses the memory",
         "For each stream: rc = cuStreamQuery(s); NOT_READY -> throw ex32::SleepRefused(...) before touching "
         "anything; any other error -> CU_CHECK(rc). Only when all are idle: sleepRegion(region, saveTo).") {
  TEST_CASE("R1 R2: with the second of two streams held by the gate kernel, sleepWhenIdle refuses at once and the region is unchanged") {
    Lab lab;
    Region r = ex32::mapRegion(lab.dev, 2 * kMiB);
    Guard guard{r};
    writePattern(r, 21);
    Stream idle, busy;
    const CUmemGenericAllocationHandle handle = r.handle;
    Pinned saved(r.size);
    const wbx::Holdings withSaved = wbx::holdings();
    bool refused = false, stillWaiting = false;
    std::string otherError;
    {
      wb::Gate gate(lab.k.gate, busy.get(), 3.0);  // a wrong answer that waits, waits 3 s at most
      try {
        ex32::sleepWhenIdle(r, saved.get(), {idle.get(), busy.get()});
      } catch (const ex32::SleepRefused&) {
        refused = true;
      } catch (const std::exception& e) {
        otherError = e.what();
      }
      stillWaiting = gate.outcome() == wb::Gate::Waiting;
      gate.open();
    }
    busy.sync();
    CHECK_MESSAGE(otherError.empty(), ("sleepWhenIdle threw something else: " + otherError));
    CHECK_MESSAGE(refused, "no ex32::SleepRefused while a stream of users still had work");
    CHECK_MESSAGE(stillWaiting, "sleepWhenIdle waited for the stream's work instead of refusing");
    CHECK_MESSAGE(r.handle == handle, "the refusal changed the region's handle");
    CHECK_MESSAGE(wbx::holdings().differenceFrom(withSaved).empty(),
                  ("the refusal changed what is held: " + wbx::holdings().differenceFrom(withSaved)));
    REQUIRE_MESSAGE(readWrite(lab.dev, r.base), "after the refusal the region is not mapped and accessible");
    CHECK(regionHoldsPattern(r, 21));
  }

  TEST_CASE("R4: when cuStreamQuery fails with another error, sleepWhenIdle throws wb::DriverError and the region stays awake") {
    Lab lab;
    Region r = ex32::mapRegion(lab.dev, 2 * kMiB);
    Guard guard{r};
    Stream s;
    const CUmemGenericAllocationHandle handle = r.handle;
    CUresult code = CUDA_SUCCESS;
    bool refused = false;
    {
      wbx::FailCall fail("cuStreamQuery", CUDA_ERROR_INVALID_HANDLE);
      try {
        code = driverErrorOf([&] { ex32::sleepWhenIdle(r, nullptr, {s.get()}); });
      } catch (const ex32::SleepRefused&) {
        refused = true;
      }
      REQUIRE_MESSAGE(fail.fired(), "sleepWhenIdle did not ask the stream with cuStreamQuery");
    }
    CHECK_MESSAGE(!refused, "a failed query is an error, not a refusal");
    CHECK(code == CUDA_ERROR_INVALID_HANDLE);
    CHECK_MESSAGE(r.handle == handle, "the region slept although the query failed");
  }

  TEST_CASE("R3: the milestones together: weights and cache under a captured graph; sleep (weights saved, cache discarded), wake at the same addresses, the same executable graph relaunched") {
    Lab lab;
    const wbx::Holdings before = wbx::holdings();
    const size_t bytes = 4 * kMiB;
    const unsigned n = static_cast<unsigned>(bytes / sizeof(float));
    Region weights = ex32::mapRegion(lab.dev, bytes), cache = ex32::mapRegion(lab.dev, bytes);
    Guard gw{weights}, gc{cache};
    {
      Pinned w(weights.size);
      float* f = static_cast<float*>(w.get());
      for (unsigned i = 0; i < n; ++i) f[i] = float(i % 1000);
      CU_CHECK(cuMemcpyHtoD(weights.base, w.get(), bytes));
    }
    Stream s;
    wbt::Graph graph;
    // The step: cache = weights * 2 + 1, from the regions' addresses as captured.
    CU_CHECK(cuStreamBeginCapture(s.get(), CU_STREAM_CAPTURE_MODE_GLOBAL));
    CU_CHECK(cuMemcpyDtoDAsync(cache.base, weights.base, bytes, s.get()));
    CUdeviceptr data = cache.base;
    float factor = 2.0f, offset = 1.0f;
    unsigned count = n;
    void* args[] = {&data, &factor, &offset, &count};
    CU_CHECK(cuLaunchKernel(lab.scale, 64, 1, 1, 256, 1, 1, 0, s.get(), args, nullptr));
    CU_CHECK(cuStreamEndCapture(s.get(), &graph.g));
    wbt::Exec exec(graph.g);
    auto stepIsRight = [&] {
      CU_CHECK(cuGraphLaunch(exec.e, s.get()));
      s.sync();
      Pinned back(cache.size);
      CU_CHECK(cuMemcpyDtoH(back.get(), cache.base, bytes));
      const float* c = static_cast<const float*>(back.get());
      for (unsigned i = 0; i < n; ++i)
        if (c[i] != float(i % 1000) * 2.0f + 1.0f) return false;
      return true;
    };
    REQUIRE(stepIsRight());
    const CUdeviceptr wBase = weights.base, cBase = cache.base;
    Pinned saved(weights.size);
    ex32::sleepWhenIdle(weights, saved.get(), {s.get()});
    ex32::sleepWhenIdle(cache, nullptr, {s.get()});
    {
      const float* f = static_cast<const float*>(saved.get());
      bool same = true;
      for (unsigned i = 0; i < n && same; ++i) same = f[i] == float(i % 1000);
      CHECK_MESSAGE(same, "the weights were not saved into saveTo");
    }
    CHECK(weights.handle == 0);
    CHECK(cache.handle == 0);
    CHECK_MESSAGE(wbx::holdings()[Held::Mappings] == before[Held::Mappings], "memory still mapped while asleep");
    ex32::wakeRegion(weights, saved.get());
    ex32::wakeRegion(cache, nullptr);
    CHECK(weights.base == wBase);
    CHECK(cache.base == cBase);
    CHECK_MESSAGE(stepIsRight(), "the executable graph captured before the sleep computed something else after the wake");
    ex32::freeRegion(weights);
    ex32::freeRegion(cache);
    const wbx::Holdings after = wbx::holdings();
    for (Held kind : {Held::Reservations, Held::MemHandles, Held::Mappings})
      CHECK_MESSAGE(after[kind] == before[kind], ("freeRegion left: " + after.differenceFrom(before)));
  }
}
