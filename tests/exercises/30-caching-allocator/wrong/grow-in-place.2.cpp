// Wrong (R2): maps a granule more than the block needs, as headroom for the next one
//
// The segment holds a granule it has no block for: the packing the allocator exists for is lost at every growth.
#include "exercises.hpp"

#include <algorithm>
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
  if (size > s_.seg->capacity - s_.top)
    throw std::length_error("Arena::allocate(" + std::to_string(bytes) + "): past the segment's " +
                            std::to_string(s_.seg->capacity) + " bytes");
  mapRange(*s_.seg, s_.top, std::min(size + s_.seg->granule, s_.seg->capacity - s_.top));
  const CUdeviceptr p = s_.seg->base + s_.top;
  s_.top += size;
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
