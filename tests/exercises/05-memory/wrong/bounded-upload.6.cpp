// Wrong (R4): checks that the first and the last byte lie in the same allocation, which fails for 0 bytes
//
// "Ask the driver about both ends" sounds thorough. For zero bytes the last byte is dst - 1, in no
// allocation or another one, so a zero-byte copy at an allocation's start is refused; and for
// (size_t)-64 bytes the last byte wraps round to an address inside, so that copy is let through.
// In "copies that fit land ...", the zero-byte upload at the start throws and the case fails.
#include "exercises.hpp"

#include <stdexcept>
#include <string>

namespace ex05 {

void uploadWithin(CUdeviceptr dst, const void* src, size_t bytes) {
  CUdeviceptr base = 0, lastBase = 0;
  const CUresult found = cuMemGetAddressRange(&base, nullptr, dst);
  if (found == CUDA_ERROR_NOT_FOUND || found == CUDA_ERROR_INVALID_VALUE)
    throw std::invalid_argument("uploadWithin: " + wb::hex(dst) + " lies in no allocation");
  CU_CHECK(found);
  const CUresult last = cuMemGetAddressRange(&lastBase, nullptr, dst + bytes - 1);
  if (last != CUDA_SUCCESS || lastBase != base)
    throw std::out_of_range("uploadWithin: " + std::to_string(bytes) + " bytes do not fit");
  if (bytes == 0) return;
  CU_CHECK(cuMemcpyHtoD(dst, src, bytes));
}

}  // namespace ex05
