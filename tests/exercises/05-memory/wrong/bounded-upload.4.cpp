// Wrong (R3): CU_CHECKs cuMemGetAddressRange, so an address in no allocation throws wb::DriverError
//
// Every call goes through CU_CHECK, as the lessons do. But for an address in no allocation the
// error is the answer the task asks to turn into std::invalid_argument; a caller that catches
// that (to say "not device memory") gets a driver error instead. In "an address in no allocation
// ...", `atZero == "std::invalid_argument"` fails.
#include "exercises.hpp"

#include <stdexcept>
#include <string>

namespace ex05 {

void uploadWithin(CUdeviceptr dst, const void* src, size_t bytes) {
  CUdeviceptr base = 0;
  size_t size = 0;
  CU_CHECK(cuMemGetAddressRange(&base, &size, dst));
  const size_t room = size - static_cast<size_t>(dst - base);
  if (bytes > room) throw std::out_of_range("uploadWithin: " + std::to_string(bytes) + " bytes do not fit");
  if (bytes == 0) return;
  CU_CHECK(cuMemcpyHtoD(dst, src, bytes));
}

}  // namespace ex05
