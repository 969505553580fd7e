// Reference solution of lesson 05's exercise bounded-upload (lessons/05-memory/exercises.cpp).
#include "exercises.hpp"

#include <stdexcept>
#include <string>

namespace ex05 {

// The allocation is found from dst itself, so an address inside it is as good as its base. The room
// left is measured from dst (base <= dst < base + size, so neither subtraction can wrap) and bytes is
// compared with it: dst + bytes is never computed, because a huge bytes would wrap it round to an
// address that looks inside. Everything is size_t and CUdeviceptr, 64 bits, so an allocation past
// 4 GiB is measured whole. An address in no allocation is an answer the driver gives as an error;
// any other error (no current context, say) is a failure and is thrown as one.
void uploadWithin(CUdeviceptr dst, const void* src, size_t bytes) {
  CUdeviceptr base = 0;
  size_t size = 0;
  const CUresult found = cuMemGetAddressRange(&base, &size, dst);
  if (found == CUDA_ERROR_NOT_FOUND || found == CUDA_ERROR_INVALID_VALUE)
    throw std::invalid_argument("uploadWithin: " + wb::hex(dst) + " lies in no allocation");
  CU_CHECK(found);
  const size_t room = size - static_cast<size_t>(dst - base);
  if (bytes > room)
    throw std::out_of_range("uploadWithin: " + std::to_string(bytes) + " bytes at " + wb::hex(dst) + " run past the end of its allocation (" +
                            std::to_string(room) + " bytes left)");
  if (bytes == 0) return;
  CU_CHECK(cuMemcpyHtoD(dst, src, bytes));
}

}  // namespace ex05
