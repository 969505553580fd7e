// Wrong (R4): ignores what the memsets return
//
// "A memset cannot fail on memory I allocated." It can (a bad pointer, a context that has faulted,
// a pitch it refuses), and then the tensor keeps whatever it held while the caller is told it is
// set. In "a memset the driver fails ...", the failed fill returns normally and
// `outcome != "returned"` fails.
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
      cuMemsetD8(dst, v, count);
      return;
    }
    case 2: {
      unsigned short v = 0;
      std::memcpy(&v, value, 2);
      cuMemsetD16(dst, v, count);
      return;
    }
    case 4: {
      unsigned int v = 0;
      std::memcpy(&v, value, 4);
      cuMemsetD32(dst, v, count);
      return;
    }
    case 8: {
      unsigned int half[2] = {0, 0};
      std::memcpy(half, value, 8);
      cuMemsetD2D32(dst, 8, half[0], 1, count);
      cuMemsetD2D32(dst + 4, 8, half[1], 1, count);
      return;
    }
  }
}

}  // namespace ex05
