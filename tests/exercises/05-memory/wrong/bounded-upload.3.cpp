// Wrong (R1): refuses a copy that ends exactly at the end of the allocation (>= where > belongs)
//
// An off-by-one: "the end is one past the last byte, so reaching it is too far". A copy that fills
// the allocation up to its last byte is refused with std::out_of_range. In "copies that fit land
// ...", the copy from 1000 bytes in up to the last byte throws, and the case fails with it.
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
  const size_t room = size - static_cast<size_t>(dst - base);
  if (bytes >= room) throw std::out_of_range("uploadWithin: " + std::to_string(bytes) + " bytes do not fit");
  if (bytes == 0) return;
  CU_CHECK(cuMemcpyHtoD(dst, src, bytes));
}

}  // namespace ex05
