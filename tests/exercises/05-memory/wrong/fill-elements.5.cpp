// Wrong (R2): counts the elements in an unsigned int, which cuts a count past 2^32
//
// "An element count fits in 32 bits", as a kernel's thread count does; no warning of -Wall -Wextra
// says otherwise. 2^32 + 5 elements become 5, and in "a count past 2^32 ...", `wrongAtEnd == 0`
// fails: the far end of the range was never set.
#include "exercises.hpp"

#include <cstring>
#include <stdexcept>
#include <string>

namespace ex05 {

void fillElements(CUdeviceptr dst, const void* value, size_t elementSize, size_t count) {
  if (elementSize != 1 && elementSize != 2 && elementSize != 4 && elementSize != 8)
    throw std::invalid_argument("fillElements: an element is 1, 2, 4 or 8 bytes, not " + std::to_string(elementSize));
  const unsigned n = count;
  if (n == 0) return;
  switch (elementSize) {
    case 1: {
      unsigned char v = 0;
      std::memcpy(&v, value, 1);
      CU_CHECK(cuMemsetD8(dst, v, n));
      return;
    }
    case 2: {
      unsigned short v = 0;
      std::memcpy(&v, value, 2);
      CU_CHECK(cuMemsetD16(dst, v, n));
      return;
    }
    case 4: {
      unsigned int v = 0;
      std::memcpy(&v, value, 4);
      CU_CHECK(cuMemsetD32(dst, v, n));
      return;
    }
    case 8: {
      unsigned int half[2] = {0, 0};
      std::memcpy(half, value, 8);
      CU_CHECK(cuMemsetD2D32(dst, 8, half[0], 1, n));
      CU_CHECK(cuMemsetD2D32(dst + 4, 8, half[1], 1, n));
      return;
    }
  }
}

}  // namespace ex05
