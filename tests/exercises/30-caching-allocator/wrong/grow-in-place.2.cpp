// Wrong (R2): maps a granule more than the block needs, as headroom for the next one
//
// The segment holds a granule it has no block for: the packing the allocator exists for is lost at every growth.
#include "exercises.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace ex30 {

Arena::Arena(Segment& seg) : seg_(seg) {}

// A cached block first (mapped again where a trim gave its granules back); otherwise carved at the
// top, right after the last block: the segment grows in place, mapping only the granules it lacks,
// and top moves only once the memory is there.
CUdeviceptr Arena::allocate(size_t bytes, CUstream stream) {
  const size_t size = (bytes + 511) / 512 * 512;
  const Cached cached = cache_.take(size, stream);
  if (cached.ptr) {
    try {
      mapRange(seg_, cached.ptr - seg_.base, cached.size);
    } catch (...) {
      cache_.put(cached.ptr, cached.size, stream);
      throw;
    }
    live_[cached.ptr] = cached.size;
    return cached.ptr;
  }
  if (size > seg_.capacity - top_)
    throw std::length_error("Arena::allocate(" + std::to_string(bytes) + "): past the segment's " +
                            std::to_string(seg_.capacity) + " bytes");
  mapRange(seg_, top_, std::min(size + seg_.granule, seg_.capacity - top_));
  const CUdeviceptr p = seg_.base + top_;
  top_ += size;
  live_[p] = size;
  return p;
}

void Arena::free(CUdeviceptr p, CUstream stream) {
  auto it = live_.find(p);
  if (it == live_.end()) throw std::invalid_argument("Arena::free: not a live block of this arena");
  cache_.put(p, it->second, stream);
  live_.erase(it);
}

size_t Arena::top() const { return top_; }

std::vector<std::pair<CUdeviceptr, size_t>> Arena::live() const { return {live_.begin(), live_.end()}; }

}  // namespace ex30
