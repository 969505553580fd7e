// Wrong (R5): moves top before the memory is mapped, and relies on mapRange to refuse
//
// mapRange throws std::length_error past the capacity, but top has already moved over memory that was never mapped.
#include "exercises.hpp"

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
  const CUdeviceptr p = seg_.base + top_;
  top_ += size;
  mapRange(seg_, p - seg_.base, size);
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
