// Wrong (R5): ignores what cuMemcpyHtoD returns
//
// "A synchronous copy either works or the program crashes." It returns an error instead, and the
// caller is told nothing: a tensor that never arrived is used as if it had. In "a copy the driver
// fails is thrown ...", the failed copy returns normally and `outcome != "returned"` fails.
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
  if (bytes > room) throw std::out_of_range("uploadWithin: " + std::to_string(bytes) + " bytes do not fit");
  if (bytes == 0) return;
  cuMemcpyHtoD(dst, src, bytes);
}

}  // namespace ex05
