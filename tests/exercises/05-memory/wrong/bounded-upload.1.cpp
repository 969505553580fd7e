// Wrong (R2): compares bytes with the whole allocation's size, forgetting how far into it dst is
//
// "cuMemGetAddressRange gives the size, so the copy must not be larger than that": true from the
// base only. From 1000 bytes in, a copy of the allocation's size minus 999 bytes passes the test
// and runs one byte past the end. In "copies that would run past the end ...",
// `outcome == "std::out_of_range"` fails for that ask (the copy runs, or the driver refuses it
// with its own error), and again in the 4 GiB case for a 1 MiB copy 60 KiB before the end.
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
  if (bytes > size) throw std::out_of_range("uploadWithin: " + std::to_string(bytes) + " bytes do not fit");
  if (bytes == 0) return;
  CU_CHECK(cuMemcpyHtoD(dst, src, bytes));
}

}  // namespace ex05
