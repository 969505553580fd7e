// Wrong (R3): returns at once for a count of 0, before it looks at the element size
//
// "No elements, nothing to do." But an element size of 3 is a caller's bug whatever the count, and
// the task refuses it every time: a bug that shows only once the tensor is not empty shows late. In
// "R3: any other element size is refused ...", size 3 with no elements returns, and
// `outcome == "std::invalid_argument"` fails.
#include "exercises.hpp"

#include <cstring>
#include <stdexcept>
#include <string>

namespace ex05 {

void fillElements(CUdeviceptr dst, const void* value, size_t elementSize, size_t count) {
  if (count == 0) return;
  if (elementSize != 1 && elementSize != 2 && elementSize != 4 && elementSize != 8)
    throw std::invalid_argument("fillElements: an element is 1, 2, 4 or 8 bytes, not " + std::to_string(elementSize));
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
