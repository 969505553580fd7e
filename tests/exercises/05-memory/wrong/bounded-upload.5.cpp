// Wrong (R2): keeps the room left after dst in an unsigned int, which cuts it to 32 bits
//
// "Tensors are never 4 GiB", so an unsigned is enough; no warning of -Wall -Wextra says otherwise.
// In an allocation of 4 GiB + 64 KiB, the room 4 KiB in is 4 GiB + 60 KiB, cut to 60 KiB, and a
// 1 MiB copy there is refused. In "past 4 GiB ...", that upload throws std::out_of_range and the
// case fails with it.
#include "exercises.hpp"

#include <stdexcept>
#include <string>

namespace ex05 {

void uploadWithin(CUdeviceptr dst, const void* src, size_t bytes) {
  CUdeviceptr base = 0;
  size_t size = 0;
  const CUresult found = cuMemGetAddressRange(&base, &size, dst);
  if (found == CUDA_ERROR_NOT_FOUND || found == CUDA_ERROR_INVALID_VALUE)
    throw std::invalid_argument("uploadWithin: " + wb::hex(dst) + " lies in no allocation");
  CU_CHECK(found);
  const unsigned room = size - (dst - base);
  if (bytes > room) throw std::out_of_range("uploadWithin: " + std::to_string(bytes) + " bytes do not fit");
  if (bytes == 0) return;
  CU_CHECK(cuMemcpyHtoD(dst, src, bytes));
}

}  // namespace ex05
