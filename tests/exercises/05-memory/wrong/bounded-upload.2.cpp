// Wrong (R2): tests dst + bytes against the end of the allocation, a sum that wraps round for a huge size
//
// "The copy ends at dst + bytes, so that must not pass base + size": the natural way to write it,
// and right until bytes is a negative difference turned into a size_t. (size_t)-64 bytes 4 KiB
// into the allocation wrap dst + bytes round to 64 bytes before dst, inside it, so the copy is let
// through; cuMemcpyHtoD then fails or crashes the check. In "copies that would run past the end
// ...", `outcome == "std::out_of_range"` fails for that ask (or the process dies).
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
  if (dst + bytes > base + size) throw std::out_of_range("uploadWithin: " + std::to_string(bytes) + " bytes do not fit");
  if (bytes == 0) return;
  CU_CHECK(cuMemcpyHtoD(dst, src, bytes));
}

}  // namespace ex05
