// The exercises of lesson 30 (a caching allocator that grows in place): their tasks are in
// exercises.cpp beside this file, their checks in tests/exercises/exercise30_caching_allocator.cpp.
// The four milestones build one allocator on the Segment below (given, not an exercise).
#pragma once

#include "workbook.hpp"

#include <cstddef>
#include <map>
#include <utility>
#include <vector>

namespace ex30 {

// Given: one reservation of addresses on dev, and the physical memory mapped behind it in runs. A run
// is one cuMemCreate mapped once and released at once, so the mapping is its only owner and its
// cuMemUnmap frees it; a run is unmapped whole, never in part (lesson 14).
struct Segment {
  CUdevice dev = 0;
  CUdeviceptr base = 0;
  size_t capacity = 0, granule = 0;
  std::map<size_t, size_t> runs;  // first granule -> granules, for every run mapped now

  Segment(CUdevice device, size_t bytes) : dev(device) {
    const CUmemAllocationProp p = prop();
    CU_CHECK(cuMemGetAllocationGranularity(&granule, &p, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    capacity = (bytes + granule - 1) / granule * granule;
    CU_CHECK(cuMemAddressReserve(&base, capacity, granule, 0, 0));
  }
  ~Segment() {
    cuCtxSynchronize();  // no stream may still use what is unmapped
    for (const auto& [first, count] : runs) cuMemUnmap(base + first * granule, count * granule);
    cuMemAddressFree(base, capacity);
  }
  Segment(const Segment&) = delete;
  Segment& operator=(const Segment&) = delete;

  // Pinned memory on dev: what cuMemCreate is given.
  CUmemAllocationProp prop() const {
    CUmemAllocationProp p{};
    p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    p.location.id = dev;
    return p;
  }
  size_t mappedBytes() const {
    size_t granules = 0;
    for (const auto& run : runs) granules += run.second;
    return granules * granule;
  }
};

// Exercise 1: maps every granule [offset, offset + bytes) touches that no run maps; returns the bytes it mapped.
size_t mapRange(Segment& seg, size_t offset, size_t bytes);

// What StreamCache::take hands out: a cached block, or {0, 0}.
struct Cached {
  CUdeviceptr ptr = 0;
  size_t size = 0;
};

// Exercise 2: freed blocks, each kept with the stream it was freed on, handed out again in stream order.
class StreamCache {
 public:
  StreamCache() = default;
  ~StreamCache();                                           // destroys every event it still holds
  StreamCache(const StreamCache&) = delete;
  StreamCache& operator=(const StreamCache&) = delete;

  void put(CUdeviceptr ptr, size_t size, CUstream stream);  // a block freed on stream
  Cached take(size_t size, CUstream stream);                // the smallest block of at least size usable on stream

 private:
  // State you will need (change it as you like).
  struct Entry {
    CUdeviceptr ptr = 0;
    size_t size = 0;
    CUstream stream = nullptr;
    CUevent freed = nullptr;
  };
  std::vector<Entry> entries_;
};

// Exercise 3: blocks carved from a Segment that grows in place; freed blocks reused through a StreamCache.
class Arena {
 public:
  explicit Arena(Segment& seg);
  CUdeviceptr allocate(size_t bytes, CUstream stream);
  void free(CUdeviceptr p, CUstream stream);
  size_t top() const;                                          // bytes carved so far, from seg.base
  std::vector<std::pair<CUdeviceptr, size_t>> live() const;    // the blocks handed out and not freed

 private:
  // State you will need (change it as you like).
  struct State {
    Segment* seg = nullptr;
    StreamCache cache;
    size_t top = 0;
    std::map<CUdeviceptr, size_t> live;  // address -> the block's size
  } s_;
};

// Exercise 4: unmaps every run that no live block [ptr, ptr + size) touches; returns the bytes given back.
size_t trim(Segment& seg, const std::vector<std::pair<CUdeviceptr, size_t>>& live);

}  // namespace ex30
