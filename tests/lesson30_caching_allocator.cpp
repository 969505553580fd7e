// Lesson 30's claims: the trace both sides replay is deterministic, balanced and as its rule says;
// a reservation takes no memory until runs are mapped behind it, runs mapped one after another keep
// the base address and every byte written, and unmapping one run gives its memory back and leaves
// its neighbours' addresses and data; cuMemCreate of more than the device has returns
// CUDA_ERROR_OUT_OF_MEMORY and holds nothing; an event recorded on a stream a gate holds, and the
// stream itself, are not complete until the gate opens, and work queued there after it runs after. (That a mapping is unmapped
// whole and never in part is lesson 14's claim: its unspecified suite.)
#include "damaged_images.hpp"
#include "gate.hpp"
#include "lesson14_virtual_memory.hpp"
#include "support.hpp"
#include "../lessons/30-caching-allocator/trace.hpp"

#include <algorithm>
#include <map>
#include <vector>

namespace {

using l14::granularity;
using l14::onDevice;
using wbt::Stream;

constexpr size_t kMiB = size_t{1} << 20;

struct Lab {
  wbt::RetainedPrimary primary{wbt::deviceKeepingPrimary(0)};
  wbt::Pushed current{primary.get()};
};

// One reservation and the runs mapped behind it (each one cuMemCreate, released once mapped), all
// given back at scope exit.
struct Reservation {
  CUdevice dev;
  size_t granule, capacity;
  CUdeviceptr base = 0;
  std::map<size_t, size_t> runs;  // offset -> bytes
  Reservation(CUdevice d, size_t cap) : dev(d), granule(granularity(d)), capacity(cap) {
    CU_CHECK(cuMemAddressReserve(&base, capacity, granule, 0, 0));
  }
  ~Reservation() {
    cuCtxSynchronize();
    for (const auto& [offset, bytes] : runs) cuMemUnmap(base + offset, bytes);
    cuMemAddressFree(base, capacity);
  }
  void map(size_t offset, size_t bytes) {
    const CUmemAllocationProp prop = onDevice(dev);
    CUmemGenericAllocationHandle h = 0;
    CU_CHECK(cuMemCreate(&h, bytes, &prop, 0));
    const CUresult rc = cuMemMap(base + offset, bytes, 0, h, 0);
    CU_CHECK(cuMemRelease(h));
    CU_CHECK(rc);
    runs[offset] = bytes;
    CUmemAccessDesc access{};
    access.location = prop.location;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    CU_CHECK(cuMemSetAccess(base + offset, bytes, &access, 1));
  }
  void unmap(size_t offset) {
    CU_CHECK(cuMemUnmap(base + offset, runs.at(offset)));
    runs.erase(offset);
  }
};

std::vector<uint32_t> readWords(CUdeviceptr p, size_t words) {
  std::vector<uint32_t> v(words);
  CU_CHECK(cuMemcpyDtoH(v.data(), p, words * sizeof(uint32_t)));
  return v;
}
bool allAre(const std::vector<uint32_t>& v, uint32_t x) {
  return std::all_of(v.begin(), v.end(), [&](uint32_t w) { return w == x; });
}

}  // namespace

TEST_SUITE("trace") {
  TEST_CASE("the trace is the same every time, every allocation is freed once on the stream it was made on, weights first and last, and its statistics add up") {
    const l30::Trace a = l30::makeTrace(), b = l30::makeTrace();
    REQUIRE(a.events.size() == b.events.size());
    CHECK(a.checksum == b.checksum);
    CHECK(a.totalBytes == b.totalBytes);
    std::vector<int> stream(a.allocations, -1), frees(a.allocations, 0);
    uint64_t live = 0, peak = 0, total = 0;
    for (const l30::Event& e : a.events) {
      REQUIRE(e.id < a.allocations);
      CHECK(e.stream >= 0);
      CHECK(e.stream < l30::kStreams);
      if (e.alloc) {
        stream[e.id] = e.stream;
        live += e.bytes, total += e.bytes, peak = std::max(peak, live);
      } else {
        CHECK(stream[e.id] == e.stream);
        ++frees[e.id];
        live -= e.bytes;
      }
    }
    CHECK(live == 0);
    CHECK(peak == a.peakLive);
    CHECK(total == a.totalBytes);
    CHECK(std::all_of(frees.begin(), frees.end(), [](int f) { return f == 1; }));
    // Up to the idle point every allocation but the 64 weights has been freed.
    uint64_t liveAtIdle = 0;
    for (size_t i = 0; i < a.idleAt; ++i) liveAtIdle += a.events[i].alloc ? a.events[i].bytes : 0 - a.events[i].bytes;
    uint64_t weights = 0;
    for (size_t i = 0; i < 64; ++i) weights += a.events[i].bytes;
    CHECK(liveAtIdle == weights);
    CHECK(a.events.size() - a.idleAt == 64);
  }
}

TEST_SUITE("memory") {
  TEST_CASE("runs mapped one after another behind one reservation keep the base and every byte written; the reservation alone takes no memory, each run its size; unmapping the middle run gives its memory back and leaves its neighbours") {
    Lab lab;
    const CUdevice dev = wbt::device(0);
    const size_t g = granularity(dev);
    const size_t before = wbt::freeMemory();
    Reservation r(dev, 64 * g);
    const size_t reserved = wbt::freeMemory();
    CHECK(before - std::min(before, reserved) < 16 * kMiB);
    const CUdeviceptr base = r.base;
    for (size_t i = 0; i < 3; ++i) {
      r.map(i * 8 * g, 8 * g);
      CU_CHECK(cuMemsetD32(r.base + i * 8 * g, 0x30 + i, 8 * g / 4));
      CU_CHECK(cuCtxSynchronize());
    }
    CHECK(r.base == base);
    for (size_t i = 0; i < 3; ++i) CHECK(allAre(readWords(r.base + i * 8 * g, 8 * g / 4), 0x30 + i));
    const size_t mapped = wbt::freeMemory();
    CHECK(reserved - mapped >= 24 * g);
    r.unmap(8 * g);
    const size_t after = wbt::freeMemory();
    CHECK(after - mapped >= 8 * g);
    CHECK(allAre(readWords(r.base, 8 * g / 4), 0x30));
    CHECK(allAre(readWords(r.base + 16 * g, 8 * g / 4), 0x32));
    r.map(8 * g, 8 * g);  // the same addresses, new memory
    CU_CHECK(cuMemsetD32(r.base + 8 * g, 0x40, 8 * g / 4));
    CU_CHECK(cuCtxSynchronize());
    CHECK(allAre(readWords(r.base + 8 * g, 8 * g / 4), 0x40));
  }

  TEST_CASE("cuMemCreate of more than the device's total memory returns CUDA_ERROR_OUT_OF_MEMORY and holds nothing") {
    Lab lab;
    const CUdevice dev = wbt::device(0);
    const size_t g = granularity(dev);
    size_t freeBytes = 0, total = 0;
    CU_CHECK(cuMemGetInfo(&freeBytes, &total));
    const CUmemAllocationProp prop = onDevice(dev);
    CUmemGenericAllocationHandle h = 0;
    const CUresult rc = cuMemCreate(&h, (total + g) / g * g, &prop, 0);
    CHECK(rc == CUDA_ERROR_OUT_OF_MEMORY);
    if (rc == CUDA_SUCCESS) cuMemRelease(h);
    size_t freeAfter = 0;
    CU_CHECK(cuMemGetInfo(&freeAfter, &total));
    CHECK(freeAfter + 64 * kMiB >= freeBytes);
  }
}

TEST_SUITE("stream-order") {
  TEST_CASE("an event recorded on a stream a gate holds is not complete, nor is the stream (cuStreamQuery), until the gate opens; then both are, and work queued on that stream after it ran after the gated kernel") {
    Lab lab;
    CUlibrary library = nullptr;
    CU_CHECK(cuLibraryLoadFromFile(&library, wb::verifiedImagePath("streams.fatbin").c_str(), nullptr, nullptr, 0,
                                   nullptr, nullptr, 0));
    const wb::StreamKernels k = wb::StreamKernels::load(library);
    {
      Stream a;
      CUevent ev = nullptr;
      CU_CHECK(cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING));
      wbt::DeviceBuffer word(4);
      wbt::setWords(word.get(), 0, 1);
      CUresult whileHeld = CUDA_SUCCESS, streamWhileHeld = CUDA_SUCCESS, afterOpen = CUDA_ERROR_UNKNOWN;
      wb::Gate::Outcome outcome = wb::Gate::Waiting;
      {
        wb::Gate gate(k.gate, a.get(), 10.0);
        CU_CHECK(cuMemsetD32Async(word.get(), 7, 1, a.get()));  // queued behind the gate, as a reuse on A would be
        CU_CHECK(cuEventRecord(ev, a.get()));
        whileHeld = cuEventQuery(ev);
        streamWhileHeld = cuStreamQuery(a.get());
        CHECK(readWords(word.get(), 1)[0] == 0);
        gate.open();
        CU_CHECK(cuEventSynchronize(ev));
        afterOpen = cuEventQuery(ev);
        outcome = gate.outcome();
      }
      a.sync();
      CHECK(cuStreamQuery(a.get()) == CUDA_SUCCESS);
      CHECK(streamWhileHeld == CUDA_ERROR_NOT_READY);
      CHECK(whileHeld == CUDA_ERROR_NOT_READY);
      CHECK(afterOpen == CUDA_SUCCESS);
      CHECK(outcome == wb::Gate::Released);
      CHECK(readWords(word.get(), 1)[0] == 7);
      cuEventDestroy(ev);
    }
    cuLibraryUnload(library);
  }
}

TEST_SUITE("damaged-images") {
  TEST_CASE("pointed at an empty folder or at damaged images, the program stops in seconds, naming the file") {
    wbt::checkProgramRefusesDamagedImages(WORKBOOK_LESSON_PROGRAM);
  }
}
