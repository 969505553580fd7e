// Wrong (R1): takes the count as bytes, as std::memset does
//
// Right for 1-byte elements; for larger ones it sets elementSize times too many, and
// `changedOutside == 0` fails (the check's buffer has room for them, so they change its bytes
// rather than fault).
#include "exercises.hpp"

#include <cstring>
#include <stdexcept>
#include <string>

namespace ex05 {

void fillElements(CUdeviceptr dst, const void* value, size_t elementSize, size_t count) {
  if (elementSize != 1 && elementSize != 2 && elementSize != 4 && elementSize != 8)
    throw std::invalid_argument("fillElements: an element is 1, 2, 4 or 8 bytes, not " + std::to_string(elementSize));
  if (count == 0) return;
  const size_t bytes = count * elementSize;
  switch (elementSize) {
    case 1: {
      unsigned char v = 0;
      std::memcpy(&v, value, 1);
      CU_CHECK(cuMemsetD8(dst, v, bytes));
      return;
    }
    case 2: {
      unsigned short v = 0;
      std::memcpy(&v, value, 2);
      CU_CHECK(cuMemsetD16(dst, v, bytes));
      return;
    }
    case 4: {
      unsigned int v = 0;
      std::memcpy(&v, value, 4);
      CU_CHECK(cuMemsetD32(dst, v, bytes));
      return;
    }
    case 8: {
      unsigned int half[2] = {0, 0};
      std::memcpy(half, value, 8);
      CU_CHECK(cuMemsetD2D32(dst, 8, half[0], 1, bytes));
      CU_CHECK(cuMemsetD2D32(dst + 4, 8, half[1], 1, bytes));
      return;
    }
  }
}

}  // namespace ex05
