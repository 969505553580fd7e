// Wrong (R1): gives the 2D memset's pitch in elements (2 words) instead of bytes (8)
//
// Width and height are counted in elements, so the pitch "must be too". It is in bytes: rows 2
// bytes apart overlap, and the driver either refuses the pitch or writes the words on top of one
// another. With one element there is one row and the pitch is unused, so it passes; with 3, the
// fill throws or `wrongInside == 0` fails for element size 8.
#include "exercises.hpp"

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
      unsigned int half[2] = {0, 0};
      std::memcpy(half, value, 8);
      CU_CHECK(cuMemsetD2D32(dst, 2, half[0], 1, count));
      CU_CHECK(cuMemsetD2D32(dst + 4, 2, half[1], 1, count));
      return;
    }
  }
}

}  // namespace ex05
