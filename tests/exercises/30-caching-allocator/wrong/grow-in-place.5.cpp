// Wrong (R5): moves top before the memory is mapped, and relies on mapRange to refuse
//
// mapRange throws std::length_error past the capacity, but top has already moved over memory that was never mapped.
#include "exercises.hpp"

#include <stdexcept>
#include <string>

namespace ex30 {

Arena::Arena(Segment& seg) { s_.seg = &seg; }

// A cached block first (mapped again where a trim gave its granules back); otherwise carved at the
// top, right after the last block: the segment grows in place, mapping only the granules it lacks,
// and top moves only once the memory is there.
CUdeviceptr Arena::allocate(size_t bytes, CUstream stream) {
  const size_t size = (bytes + 511) / 512 * 512;
  const Cached cached = s_.cache.take(size, stream);
  if (cached.ptr) {
    try {
      mapRange(*s_.seg, cached.ptr - s_.seg->base, cached.size);
    } catch (...) {
      s_.cache.put(cached.ptr, cached.size, stream);
      throw;
    }
    s_.live[cached.ptr] = cached.size;
    return cached.ptr;
  }
  const CUdeviceptr p = s_.seg->base + s_.top;
  s_.top += size;
  mapRange(*s_.seg, p - s_.seg->base, size);
  s_.live[p] = size;
  return p;
}

void Arena::free(CUdeviceptr p, CUstream stream) {
  auto it = s_.live.find(p);
  if (it == s_.live.end()) throw std::invalid_argument("Arena::free: not a live block of this arena");
  s_.cache.put(p, it->second, stream);
  s_.live.erase(it);
}

size_t Arena::top() const { return s_.top; }

std::vector<std::pair<CUdeviceptr, size_t>> Arena::live() const { return {s_.live.begin(), s_.live.end()}; }

}  // namespace ex30
