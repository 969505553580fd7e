// The checks of lesson 30's exercises (lessons/30-caching-allocator/exercises.cpp): four milestones of
// one caching allocator. What the code under check creates, maps and records the ledger counts
// (ledger.hpp), which also fails the driver call a case names; stream order is made deterministic
// with the gate kernel (kernels/streams.cu); trim-idle reads the device's free memory, so its check
// runs with the GPU to itself. Each case's name begins with the requirements it verifies.
#include "check.hpp"
#include "gate.hpp"
#include "lesson14_virtual_memory.hpp"
#include "30-caching-allocator/exercises.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

using ex30::Cached;
using l14::canReadWrite;
using wbt::Stream;

constexpr size_t kMiB = size_t{1} << 20;

// A context of the check's own on device 0, current, with the gate kernel loaded (before any gate closes).
struct Lab {
  CUdevice dev = (wbt::initDriver(), wbt::device(0));
  wbt::OwnedContext ctx{dev};
  CUlibrary library = nullptr;
  wb::StreamKernels k;
  Lab() {
    if (!wbt::attribute(dev, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED))
      throw wbx::Skipped("device 0 has no virtual memory management");
    CU_CHECK(cuLibraryLoadFromFile(&library, wb::verifiedImagePath("streams.fatbin").c_str(), nullptr, nullptr, 0,
                                   nullptr, nullptr, 0));
    k = wb::StreamKernels::load(library);
  }
  ~Lab() { cuLibraryUnload(library); }
};

// Made-up block addresses: the cache keeps them and never touches the memory.
constexpr CUdeviceptr kP1 = 0x10000000, kP2 = 0x20000000, kP3 = 0x30000000;

// Every granule [from, to) of seg: mapped (in a run) and read-write for dev.
bool usable(const ex30::Segment& seg, size_t from, size_t to) {
  for (size_t g = from; g < to; ++g) {
    auto it = seg.runs.upper_bound(g);
    if (it == seg.runs.begin() || g >= std::prev(it)->first + std::prev(it)->second) return false;
    if (!canReadWrite(seg.dev, seg.base + g * seg.granule)) return false;
  }
  return true;
}

// The check's own run of granules [first, first + count), recorded in seg.runs as mapRange would.
void mapRun(ex30::Segment& seg, size_t first, size_t count) {
  const CUmemAllocationProp prop = seg.prop();
  CUmemGenericAllocationHandle h = 0;
  CU_CHECK(cuMemCreate(&h, count * seg.granule, &prop, 0));
  const CUresult rc = cuMemMap(seg.base + first * seg.granule, count * seg.granule, 0, h, 0);
  CU_CHECK(cuMemRelease(h));
  CU_CHECK(rc);
  seg.runs[first] = count;
  CUmemAccessDesc access{};
  access.location = prop.location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  CU_CHECK(cuMemSetAccess(seg.base + first * seg.granule, count * seg.granule, &access, 1));
}

uint32_t wordAt(CUdeviceptr p) {
  uint32_t w = 0;
  CU_CHECK(cuMemcpyDtoH(&w, p, sizeof w));
  return w;
}

bool sameCached(const Cached& c, CUdeviceptr ptr, size_t size) { return c.ptr == ptr && c.size == size; }

// Whether two of the blocks overlap.
bool anyOverlap(std::vector<std::pair<CUdeviceptr, size_t>> blocks) {
  std::sort(blocks.begin(), blocks.end());
  for (size_t i = 1; i < blocks.size(); ++i)
    if (blocks[i - 1].first + blocks[i - 1].second > blocks[i].first) return true;
  return false;
}

}  // namespace

EXERCISE("map-range", "Map the granules a block needs, and only those",
         "For g from offset / seg.granule up to (offset + bytes + seg.granule - 1) / seg.granule: skip the granules "
         "a run of seg.runs holds; for each stretch [g, stop) of missing ones, cuMemCreate((stop - g) * seg.granule, "
         "seg.prop()), cuMemMap at seg.base + g * seg.granule, cuMemRelease, cuMemSetAccess read-write for seg.dev, "
         "seg.runs[g] = stop - g. On a failure unmap the runs this call made, erase them, and rethrow.") {
  TEST_CASE("R1 R2: each call maps exactly the granules its range touches that were missing, one run per stretch, read-write") {
    Lab lab;
    ex30::Segment seg(lab.dev, 64 * l14::granularity(lab.dev));
    const size_t g = seg.granule;
    struct Step {
      size_t offset, bytes, returned;
      long creates;
      std::map<size_t, size_t> runs;
    };
    const std::vector<Step> steps = {
        {0, 1, g, 1, {{0, 1}}},
        {g / 2, 2 * g, 2 * g, 1, {{0, 1}, {1, 2}}},
        {0, 3 * g, 0, 0, {{0, 1}, {1, 2}}},
        {5 * g, g, g, 1, {{0, 1}, {1, 2}, {5, 1}}},
        {0, 7 * g, 3 * g, 2, {{0, 1}, {1, 2}, {3, 2}, {5, 1}, {6, 1}}},
        {20 * g, 0, 0, 0, {{0, 1}, {1, 2}, {3, 2}, {5, 1}, {6, 1}}},
    };
    for (const Step& s : steps) {
      CAPTURE(s.offset);
      CAPTURE(s.bytes);
      const long before = wbx::calls("cuMemCreate");
      const size_t got = ex30::mapRange(seg, s.offset, s.bytes);
      CHECK_MESSAGE(got == s.returned, "R1: mapRange returned " << got << " bytes, not " << s.returned);
      CHECK_MESSAGE(wbx::calls("cuMemCreate") - before == s.creates,
                    "R1 R2: " << wbx::calls("cuMemCreate") - before << " cuMemCreate calls, not " << s.creates
                              << " (one per stretch of missing granules)");
      REQUIRE_MESSAGE(seg.runs == s.runs, "R1 R2: seg.runs does not hold one run per stretch mapped, and no other");
    }
    REQUIRE_MESSAGE(usable(seg, 0, 7), "R2: a granule mapped is not read-write for seg.dev");
    CU_CHECK(cuMemsetD32(seg.base, 0x30303030u, 7 * g / 4));
    CU_CHECK(cuCtxSynchronize());
    CHECK(wordAt(seg.base) == 0x30303030u);
    CHECK(wordAt(seg.base + 7 * g - 4) == 0x30303030u);
  }

  TEST_CASE("R3: a range past the capacity throws std::length_error and maps nothing") {
    Lab lab;
    ex30::Segment seg(lab.dev, 8 * l14::granularity(lab.dev));
    CHECK_MESSAGE(ex30::mapRange(seg, 0, 0) == 0, "R1: zero bytes mapped something");
    const wbx::Holdings before = wbx::holdings();
    CHECK_THROWS_AS(ex30::mapRange(seg, 7 * seg.granule, 2 * seg.granule), std::length_error);
    CHECK_THROWS_AS(ex30::mapRange(seg, 8 * seg.granule, 1), std::length_error);
    CHECK_MESSAGE(seg.runs.empty(), "R3: seg.runs changed");
    const std::string left = wbx::holdings().differenceFrom(before);
    CHECK_MESSAGE(left.empty(), "R3: a refused range left something held: " << left);
  }

  TEST_CASE("R4: a failed cuMemMap in the second stretch, or a failed cuMemCreate, throws wb::DriverError and leaves the segment as it was") {
    Lab lab;
    ex30::Segment seg(lab.dev, 16 * l14::granularity(lab.dev));
    const size_t g = seg.granule;
    ex30::mapRange(seg, g, g);  // granule 1: a call for [0, 3g) then maps two stretches, 0 and 2
    const std::map<size_t, size_t> runs = seg.runs;
    const wbx::Holdings before = wbx::holdings();
    for (const char* failing : {"cuMemMap", "cuMemCreate"}) {
      CAPTURE(failing);
      {
        wbx::FailCall fail(failing, CUDA_ERROR_OUT_OF_MEMORY, failing[5] == 'M' ? 2 : 1);
        CHECK_THROWS_AS(ex30::mapRange(seg, 0, 3 * g), wb::DriverError);
        CHECK_MESSAGE(fail.fired(), "R4: mapRange did not make the call the check failed");
      }
      const std::string left = wbx::holdings().differenceFrom(before);
      CHECK_MESSAGE(left.empty(), "R4: after the failure: " << left);
      CHECK_MESSAGE(seg.runs == runs, "R4: seg.runs changed by a call that failed");
    }
    CHECK(ex30::mapRange(seg, 0, 3 * g) == 2 * g);
  }
}

EXERCISE("stream-cache", "Reuse a freed block in stream order",
         "put: cuEventCreate(&e, CU_EVENT_DISABLE_TIMING), cuEventRecord(e, stream), keep {ptr, size, stream, e}. "
         "take: among the blocks with size >= the asked size, skip another stream's whose cuEventQuery is "
         "CUDA_ERROR_NOT_READY; take the smallest, erase it, destroy its event. The destructor destroys the rest.") {
  TEST_CASE("R1: on the stream a block was freed on, it is taken at once while the stream is busy, the smallest that fits, whole") {
    Lab lab;
    Stream a;
    ex30::StreamCache cache;
    Cached got[4];
    wb::Gate::Outcome seen = wb::Gate::TimedOut;
    {
      wb::Gate gate(lab.k.gate, a.get(), 10.0);
      cache.put(kP1, 8 * kMiB, a.get());
      cache.put(kP2, 2 * kMiB, a.get());
      cache.put(kP3, 4 * kMiB, a.get());
      got[0] = cache.take(3 * kMiB, a.get());
      got[1] = cache.take(1 * kMiB, a.get());
      got[2] = cache.take(16 * kMiB, a.get());
      got[3] = cache.take(8 * kMiB, a.get());
      seen = gate.outcome();
    }
    CHECK_MESSAGE(sameCached(got[0], kP3, 4 * kMiB), "R1: 3 MiB on the same stream: not the 4 MiB block (best fit)");
    CHECK_MESSAGE(sameCached(got[1], kP2, 2 * kMiB), "R1: 1 MiB on the same stream: not the 2 MiB block");
    CHECK_MESSAGE(got[2].ptr == 0, "R1: 16 MiB: no block holds it");
    CHECK_MESSAGE(sameCached(got[3], kP1, 8 * kMiB), "R1: 8 MiB on the same stream: not the 8 MiB block");
    CHECK_MESSAGE(seen == wb::Gate::Waiting, "R1: take waited for the stream's work");
  }

  TEST_CASE("R2: on another stream a block is taken only once the work queued before its put has run, and then even while later work runs") {
    Lab lab;
    Stream a, b;
    ex30::StreamCache cache;
    Cached early, late;
    wb::Gate::Outcome seen = wb::Gate::TimedOut;
    {
      wb::Gate gate(lab.k.gate, a.get(), 10.0);
      cache.put(kP1, 4 * kMiB, a.get());
      early = cache.take(4 * kMiB, b.get());
    }  // the gate opens, and its kernel ends
    a.sync();
    {
      wb::Gate again(lab.k.gate, a.get(), 10.0);  // work queued on A after the put
      late = cache.take(4 * kMiB, b.get());
      seen = again.outcome();
    }
    CHECK_MESSAGE(early.ptr == 0, "R2: handed to stream B while the work A had queued before the put was still running");
    CHECK_MESSAGE(sameCached(late, kP1, 4 * kMiB),
                  "R2: not handed to stream B after the work queued before the put had run (only later work ran on A)");
    CHECK_MESSAGE(seen == wb::Gate::Waiting, "R2: take waited");
  }

  TEST_CASE("R3: when nothing fits take returns {0, 0} and changes nothing; a block is handed out once") {
    Lab lab;
    Stream a;
    ex30::StreamCache cache;
    cache.put(kP2, 2 * kMiB, a.get());
    CHECK_MESSAGE(cache.take(4 * kMiB, a.get()).ptr == 0, "R3: 4 MiB from a cache holding 2 MiB");
    CHECK_MESSAGE(sameCached(cache.take(2 * kMiB, a.get()), kP2, 2 * kMiB), "R3: the block went missing");
    CHECK_MESSAGE(cache.take(2 * kMiB, a.get()).ptr == 0, "R3: the same block handed out twice");
  }

  TEST_CASE("R4: every event is destroyed once its block is taken, and by the destructor") {
    Lab lab;
    Stream a;
    const wbx::Holdings before = wbx::holdings();
    {
      ex30::StreamCache cache;
      for (CUdeviceptr p : {kP1, kP2, kP3}) cache.put(p, 2 * kMiB, a.get());
      for (int i = 0; i < 3; ++i) REQUIRE(cache.take(2 * kMiB, a.get()).ptr != 0);
      const std::string held = wbx::holdings().differenceFrom(before);
      CHECK_MESSAGE(held.empty(), "R4: with every block taken: " << held);
      cache.put(kP1, 2 * kMiB, a.get());
      cache.put(kP2, 2 * kMiB, a.get());
    }
    const std::string left = wbx::holdings().differenceFrom(before);
    CHECK_MESSAGE(left.empty(), "R4: the cache destroyed, still held: " << left);
  }
}

EXERCISE("grow-in-place", "Carve blocks from a segment that grows in place",
         "The constructor keeps &seg in s_.seg. allocate: size = (bytes + 511) / 512 * 512; a s_.cache.take(size, "
         "stream) hit: mapRange(*s_.seg, ptr - s_.seg->base, its size), remember it in s_.live, return it. Otherwise "
         "throw std::length_error if size > s_.seg->capacity - s_.top; mapRange(*s_.seg, s_.top, size); the block is "
         "s_.seg->base + s_.top; then s_.top += size. free: s_.cache.put with the size s_.live holds, and erase it.") {
  TEST_CASE("R1 R2 R3: blocks carved one after another at the top in 512-byte steps, the segment mapping exactly the granules up to top(), every block keeping its address and data") {
    Lab lab;
    Stream a;
    ex30::Segment seg(lab.dev, 256 * kMiB);
    ex30::Arena arena(seg);
    const size_t g = seg.granule;
    const size_t asks[] = {1000, 3 * kMiB, 10 * kMiB, 1, 1};
    const size_t at[] = {0, 1024, 1024 + 3 * kMiB, 1024 + 13 * kMiB, 1536 + 13 * kMiB};
    std::vector<std::pair<CUdeviceptr, size_t>> handed;
    for (size_t i = 0; i < 5; ++i) {
      CAPTURE(asks[i]);
      const CUdeviceptr p = arena.allocate(asks[i], a.get());
      CHECK_MESSAGE(p == seg.base + at[i], "R1: the block is at base + " << p - seg.base << ", not right after the last one");
      const size_t top = at[i] + (asks[i] + 511) / 512 * 512;
      CHECK_MESSAGE(arena.top() == top, "R1: top() is " << arena.top() << ", not " << top);
      REQUIRE_MESSAGE(usable(seg, 0, (top + g - 1) / g), "R2: a granule under a block is not mapped read-write");
      CHECK_MESSAGE(seg.mappedBytes() == (top + g - 1) / g * g, "R2: the segment maps " << seg.mappedBytes()
                                                                                     << " bytes, not the granules up to top()");
      CU_CHECK(cuMemsetD8(p, static_cast<unsigned char>(0x40 + i), asks[i]));
      CU_CHECK(cuCtxSynchronize());
      handed.emplace_back(p, asks[i]);
      for (size_t j = 0; j < handed.size(); ++j) {
        unsigned char first = 0, last = 0;
        CU_CHECK(cuMemcpyDtoH(&first, handed[j].first, 1));
        CU_CHECK(cuMemcpyDtoH(&last, handed[j].first + handed[j].second - 1, 1));
        const auto pattern = static_cast<unsigned char>(0x40 + j);
        CHECK_MESSAGE((first == pattern && last == pattern), "R3: block " << j << " lost its data as the segment grew");
      }
    }
    auto live = arena.live();
    std::sort(live.begin(), live.end());
    REQUIRE_MESSAGE(live.size() == 5, "R3: live() lists " << live.size() << " blocks, not 5");
    for (size_t i = 0; i < 5; ++i) CHECK_MESSAGE(live[i].first == handed[i].first, "R3: live() lists another block");
    CHECK_MESSAGE(!anyOverlap(live), "R3: two live blocks overlap");
  }

  TEST_CASE("R3 R4: a freed block comes back on its stream with top() unchanged, and no two live blocks overlap") {
    Lab lab;
    Stream a;
    ex30::Segment seg(lab.dev, 256 * kMiB);
    ex30::Arena arena(seg);
    arena.allocate(1 * kMiB, a.get());
    const CUdeviceptr p = arena.allocate(3 * kMiB, a.get());
    arena.allocate(1 * kMiB, a.get());
    const size_t top = arena.top();
    arena.free(p, a.get());
    CHECK_MESSAGE(arena.allocate(3 * kMiB, a.get()) == p, "R4: 3 MiB after a 3 MiB block was freed: another address");
    arena.free(p, a.get());
    CHECK_MESSAGE(arena.allocate(2 * kMiB, a.get()) == p, "R4: 2 MiB after a 3 MiB block was freed: another address");
    CHECK_MESSAGE(arena.top() == top, "R4: top() moved although a cached block served");
    const CUdeviceptr q = arena.allocate(16 * kMiB, a.get());  // the last block
    const size_t afterQ = arena.top();
    arena.free(q, a.get());
    CHECK_MESSAGE(arena.allocate(16 * kMiB, a.get()) == q, "R4: 16 MiB after the 16 MiB block was freed: another address");
    const CUdeviceptr r = arena.allocate(1 * kMiB, a.get());
    CHECK_MESSAGE(r == seg.base + afterQ, "R3: a new block is not carved after the last one handed out");
    const auto live = arena.live();
    CHECK_MESSAGE(live.size() == 5, "R3: live() lists " << live.size() << " blocks, not 5");
    CHECK_MESSAGE(!anyOverlap(live), "R3: two live blocks overlap");
  }

  TEST_CASE("R2: a cached block whose runs a trim unmapped is mapped again before it is handed out") {
    Lab lab;
    Stream a;
    ex30::Segment seg(lab.dev, 256 * kMiB);
    ex30::Arena arena(seg);
    arena.allocate(1 * kMiB, a.get());
    const CUdeviceptr q = arena.allocate(16 * kMiB, a.get());
    arena.free(q, a.get());
    CU_CHECK(cuCtxSynchronize());
    const size_t from = q - seg.base, to = from + 16 * kMiB;
    for (auto it = seg.runs.begin(); it != seg.runs.end();) {  // as a trim would: the runs no live block touches
      const size_t runFrom = it->first * seg.granule, runTo = runFrom + it->second * seg.granule;
      if (runFrom >= from) {  // the 1 MiB block before q lies in the first granule
        CU_CHECK(cuMemUnmap(seg.base + runFrom, runTo - runFrom));
        it = seg.runs.erase(it);
      } else {
        ++it;
      }
    }
    REQUIRE(seg.runs.size() == 1);  // only the first granule, under the 1 MiB block, is left mapped
    const CUdeviceptr again = arena.allocate(16 * kMiB, a.get());
    REQUIRE(again == q);
    REQUIRE_MESSAGE(usable(seg, from / seg.granule, (to + seg.granule - 1) / seg.granule),
                    "R2: the cached block was handed out over granules a trim had unmapped");
    CU_CHECK(cuMemsetD8(again, 0x5a, 16 * kMiB));
    CU_CHECK(cuCtxSynchronize());
    unsigned char last = 0;
    CU_CHECK(cuMemcpyDtoH(&last, again + 16 * kMiB - 1, 1));
    CHECK(last == 0x5a);
  }

  TEST_CASE("R5: a block past the end of the segment throws std::length_error, and nothing changes") {
    Lab lab;
    Stream a;
    ex30::Segment seg(lab.dev, 8 * kMiB);
    ex30::Arena arena(seg);
    arena.allocate(6 * kMiB, a.get());
    const size_t top = arena.top(), mapped = seg.mappedBytes();
    CHECK_THROWS_AS(arena.allocate(4 * kMiB, a.get()), std::length_error);
    CHECK_MESSAGE(arena.top() == top, "R5: top() changed");
    CHECK_MESSAGE(seg.mappedBytes() == mapped, "R5: the segment maps more");
    CHECK_MESSAGE(arena.live().size() == 1, "R5: live() changed");
  }
}

EXERCISE("trim-idle", "Give memory back at the idle point, no pointer moved",
         "CU_CHECK(cuCtxSynchronize()); then for each run in seg.runs: from = seg.base + first * seg.granule, to = from "
         "+ count * seg.granule; it is touched when some live (p, size) has p < to && p + size > from. Untouched: "
         "cuMemUnmap(from, to - from), add to - from to the total, erase it from seg.runs.") {
  TEST_CASE("R1 R3: the runs no live block touches are unmapped and their memory given back; runs touched by a byte at either end stay, with their data") {
    Lab lab;
    ex30::Segment seg(lab.dev, 16 * l14::granularity(lab.dev));
    const size_t g = seg.granule;
    const std::map<size_t, size_t> all = {{0, 2}, {2, 1}, {3, 3}, {6, 1}, {7, 2}, {9, 1}, {10, 1}};
    for (const auto& [first, count] : all) {
      mapRun(seg, first, count);
      CU_CHECK(cuMemsetD32(seg.base + first * g, static_cast<unsigned>(first + 1), count * g / 4));
    }
    CU_CHECK(cuCtxSynchronize());
    const std::vector<std::pair<CUdeviceptr, size_t>> live = {
        {seg.base + 3 * g - 1, 2}, {seg.base + 6 * g + 100, 50}, {seg.base + 10 * g - 512, 512}};
    const size_t freeBefore = wbt::freeMemory();
    const long mappings = wbx::holdings()[wbx::Held::Mappings];
    const size_t released = ex30::trim(seg, live);
    const std::map<size_t, size_t> kept = {{2, 1}, {3, 3}, {6, 1}, {9, 1}};
    REQUIRE_MESSAGE(seg.runs == kept, "R1 R3: seg.runs does not hold exactly the runs a live block touches");
    CHECK_MESSAGE(released == 5 * g, "R1: trim returned " << released << " bytes, not " << 5 * g);
    CHECK_MESSAGE(wbx::holdings()[wbx::Held::Mappings] == mappings - 3, "R1: not exactly three runs unmapped");
    const size_t freeAfter = wbt::freeMemory();
    CHECK_MESSAGE(freeAfter >= freeBefore + 4 * g, "R1: the device's free memory grew by " << freeAfter - freeBefore);
    for (const auto& [first, count] : kept) {
      CHECK(wordAt(seg.base + first * g) == first + 1);
      CHECK(wordAt(seg.base + (first + count) * g - 4) == first + 1);
    }
  }

  TEST_CASE("R2: trim returns only after the work queued in a stream has run") {
    Lab lab;
    Stream a;
    ex30::Segment seg(lab.dev, 16 * l14::granularity(lab.dev));
    mapRun(seg, 0, 2);
    bool heldAtReturn = true;
    {
      wb::Gate gate(lab.k.gate, a.get(), 10.0);  // a kernel still running in a block about to be unmapped
      std::atomic<bool> returned{false};
      std::thread opener([&] {  // opens the gate once trim has returned, or after 1 s
        const auto start = std::chrono::steady_clock::now();
        while (!returned.load() && std::chrono::steady_clock::now() - start < std::chrono::seconds(1))
          std::this_thread::yield();
        gate.open();
      });
      try {
        ex30::trim(seg, {});
      } catch (...) {
        returned = true;
        opener.join();
        throw;
      }
      heldAtReturn = gate.outcome() == wb::Gate::Waiting;
      returned = true;
      opener.join();
    }
    CHECK_MESSAGE(!heldAtReturn, "R2: trim returned while a kernel queued before it was still running");
  }

  TEST_CASE("R3: trimmed with nothing live, nothing is left mapped or held") {
    Lab lab;
    const wbx::Holdings before = wbx::holdings();
    {
      ex30::Segment seg(lab.dev, 16 * l14::granularity(lab.dev));
      mapRun(seg, 0, 2);
      mapRun(seg, 4, 1);
      mapRun(seg, 5, 3);
      ex30::trim(seg, {});
      CHECK_MESSAGE(seg.runs.empty(), "R3: seg.runs still lists runs");
      CHECK_MESSAGE(wbx::holdings()[wbx::Held::Mappings] == before[wbx::Held::Mappings],
                    "R3: mappings left after trimming everything");
    }
    const std::string left = wbx::holdings().differenceFrom(before);
    CHECK_MESSAGE(left.empty(), "R3: left held: " << left);
  }

  TEST_CASE("R1 R3: with the other three milestones: an arena on two streams, trimmed every 50 events, keeps every live block's address and data") {
    Lab lab;
    Stream s0, s1;
    const CUstream streams[] = {s0.get(), s1.get()};
    const wbx::Holdings before = wbx::holdings();
    {
      ex30::Segment seg(lab.dev, 1024 * kMiB);
      {
        ex30::Arena arena(seg);
        struct Live {
          CUdeviceptr p;
          size_t bytes;
          int stream;
          unsigned pattern;
        };
        std::vector<Live> live;
        uint64_t state = 30;
        auto next = [&] { return (state = state * 6364136223846793005ull + 1442695040888963407ull) >> 33; };
        for (unsigned event = 1; event <= 300; ++event) {
          if (live.empty() || (live.size() < 8 && next() % 3 != 0)) {
            const size_t bytes = (1 + next() % 1536) * 4096;
            const int s = static_cast<int>(next() % 2);
            const CUdeviceptr p = arena.allocate(bytes, streams[s]);
            CU_CHECK(cuMemsetD32Async(p, event, bytes / 4, streams[s]));
            live.push_back({p, bytes, s, event});
          } else {
            const size_t i = next() % live.size();
            arena.free(live[i].p, streams[live[i].stream]);
            live.erase(live.begin() + static_cast<long>(i));
          }
          if (event % 50 != 0) continue;
          ex30::trim(seg, arena.live());
          CU_CHECK(cuCtxSynchronize());
          std::vector<std::pair<CUdeviceptr, size_t>> blocks;
          for (const Live& l : live) blocks.emplace_back(l.p, l.bytes);
          REQUIRE_MESSAGE(!anyOverlap(blocks), "R1: two live blocks overlap after event " << event);
          for (const Live& l : live) {
            REQUIRE_MESSAGE(usable(seg, (l.p - seg.base) / seg.granule, (l.p - seg.base + l.bytes + seg.granule - 1) / seg.granule),
                            "R1: a live block's memory is no longer mapped after a trim at event " << event);
            CHECK_MESSAGE(wordAt(l.p) == l.pattern, "R1: a live block lost its data by event " << event);
            CHECK_MESSAGE(wordAt(l.p + l.bytes - 4) == l.pattern, "R1: a live block lost its data by event " << event);
          }
        }
        for (const Live& l : live) arena.free(l.p, streams[l.stream]);
        ex30::trim(seg, arena.live());
        CHECK_MESSAGE(seg.runs.empty(), "R3: with every block freed, a trim left runs mapped");
      }
    }
    const std::string left = wbx::holdings().differenceFrom(before);
    CHECK_MESSAGE(left.empty(), "R3: left held after the arena and the segment were destroyed: " << left);
  }
}
