// Wrong (R4): checks the first of the two 8-byte memsets and not the second
//
// "If the low halves were set, the high halves will be too." Each call can fail on its own, and a
// failed second one leaves every element with its low half only. In "R4: a memset the driver fails
// ...", the plan that fails the second cuMemsetD2D32 returns, and `outcome != "returned"` fails.
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
      CU_CHECK(cuMemsetD2D32(dst, 8, half[0], 1, count));
      cuMemsetD2D32(dst + 4, 8, half[1], 1, count);  // "the second cannot fail if the first did not"
      return;
    }
  }
}

}  // namespace ex05
