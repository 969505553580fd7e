// Wrong (R3): returns at once for zero bytes, before asking which allocation dst lies in
//
// "Nothing to copy, nothing to check." But the task refuses an address in no allocation for any
// size, 0 included: a loader that computed a wrong address for an empty tensor is told so before
// it computes the same wrong address for a full one. In "R3: an address in no allocation ...", the
// zero-byte upload to address 0 returns, and `atZero == "std::invalid_argument"` fails.
#include "exercises.hpp"

#include <stdexcept>
#include <string>

namespace ex05 {

void uploadWithin(CUdeviceptr dst, const void* src, size_t bytes) {
  if (bytes == 0) return;
  CUdeviceptr base = 0;
  size_t size = 0;
  const CUresult found = cuMemGetAddressRange(&base, &size, dst);
  if (found == CUDA_ERROR_NOT_FOUND || found == CUDA_ERROR_INVALID_VALUE)
    throw std::invalid_argument("uploadWithin: " + wb::hex(dst) + " lies in no allocation");
  CU_CHECK(found);
  const size_t room = size - static_cast<size_t>(dst - base);
  if (bytes > room) throw std::out_of_range("uploadWithin: " + std::to_string(bytes) + " bytes do not fit");
  CU_CHECK(cuMemcpyHtoD(dst, src, bytes));
}

}  // namespace ex05
