// Wrong (R5): takes every error of cuMemGetAddressRange for "dst lies in no allocation"
//
// "If the driver cannot find the range, the address is not ours." But CUDA_ERROR_INVALID_CONTEXT
// (no current context, or one that faulted) says nothing about dst: the caller is told its address
// is bad when its context is. In "R5: a lookup or a copy the driver fails ...", the failed lookup
// throws std::invalid_argument, and `lookup != "std::invalid_argument"` fails.
#include "exercises.hpp"

#include <stdexcept>
#include <string>

namespace ex05 {

void uploadWithin(CUdeviceptr dst, const void* src, size_t bytes) {
  CUdeviceptr base = 0;
  size_t size = 0;
  if (cuMemGetAddressRange(&base, &size, dst) != CUDA_SUCCESS)
    throw std::invalid_argument("uploadWithin: " + wb::hex(dst) + " lies in no allocation");
  const size_t room = size - static_cast<size_t>(dst - base);
  if (bytes > room) throw std::out_of_range("uploadWithin: " + std::to_string(bytes) + " bytes do not fit");
  if (bytes == 0) return;
  CU_CHECK(cuMemcpyHtoD(dst, src, bytes));
}

}  // namespace ex05
