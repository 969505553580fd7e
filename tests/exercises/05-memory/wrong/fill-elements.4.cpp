// Wrong (R3): does nothing for an element size it does not know, instead of throwing
//
// A switch over the sizes it handles, and no word about the others: a caller that passes 3 or 16
// (a packed struct, a complex double) gets a buffer left as it was and no error. In "any other
// element size ...", `outcome == "std::invalid_argument"` fails.
#include "exercises.hpp"

#include <cstring>

namespace ex05 {

void fillElements(CUdeviceptr dst, const void* value, size_t elementSize, size_t count) {
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
