// Reference solution of lesson 05's exercise fill-elements (lessons/05-memory/exercises.cpp).
#include "exercises.hpp"

#include <cstring>
#include <stdexcept>
#include <string>

namespace ex05 {

// The counts are elements. The value's bytes go into an integer of the element's size with memcpy,
// so they land in memory in the same order (and no type is punned). An 8-byte element is two 4-byte
// words: a 2D memset with rows 8 bytes apart sets one word in each, first the low ones, then the
// high ones. The size is refused before anything is written; no elements ask nothing of the driver
// (what it says to a 2D memset of no rows, the reference does not say). Every count is a size_t, so
// a count past 2^32 reaches the driver whole.
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
      CU_CHECK(cuMemsetD2D32(dst, 8, half[0], 1, count));
      CU_CHECK(cuMemsetD2D32(dst + 4, 8, half[1], 1, count));
      return;
    }
  }
}

}  // namespace ex05
