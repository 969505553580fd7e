// Wrong (R1): splits an 8-byte value into halves with shifts and writes the high half first
//
// "The high word, then the low word", as the value is written down. Memory on the GPU (and the
// host) is little-endian: the value's first four bytes are its low half and go at the lower
// address. Every 8-byte element comes out with its halves swapped, and `wrongInside == 0` fails
// for element size 8.
#include "exercises.hpp"

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

namespace ex05 {

void fillElements(CUdeviceptr dst, const void* value, size_t elementSize, size_t count) {
  if (elementSize != 1 && elementSize != 2 && elementSize != 4 && elementSize != 8)
    throw std::invalid_argument("fillElements: an element is 1, 2, 4 or 8 bytes, not " + std::to_string(elementSize));
  if (count == 0) return;
  switch (elementSize) {
    case 1: {
      unsigned char v = 0;
      std::memcpy(&v, value, 1);
      CU_CHECK(cuMemsetD8(dst, v, count));
      return;
    }
    case 2: {
      unsigned short v = 0;
      std::memcpy(&v, value, 2);
      CU_CHECK(cuMemsetD16(dst, v, count));
      return;
    }
    case 4: {
      unsigned int v = 0;
      std::memcpy(&v, value, 4);
      CU_CHECK(cuMemsetD32(dst, v, count));
      return;
    }
    case 8: {
      std::uint64_t v = 0;
      std::memcpy(&v, value, 8);
      const unsigned int high = static_cast<unsigned int>(v >> 32), low = static_cast<unsigned int>(v);
      CU_CHECK(cuMemsetD2D32(dst, 8, high, 1, count));
      CU_CHECK(cuMemsetD2D32(dst + 4, 8, low, 1, count));
      return;
    }
  }
}

}  // namespace ex05
