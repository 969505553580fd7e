// Wrong (R2): gives the copy in its arguments source first, as in the name "DtoD"
//
// "Device to device: from input, to scratch." cuMemcpyDtoDAsync takes the destination first, as
// memcpy does: the copy in writes the scratch buffer's uninitialised bytes over input, and the copy
// out hands output those same bytes. Every call succeeds and the stream order is right; in "R1 R2
// R3 R4 R5 R6: serveRequest returns before its stream has run ...", `download(output.get(), bytes)
// == pattern` fails ("output does not hold input").
#include "exercises.hpp"

namespace ex13 {

void serveRequest(CUmemoryPool pool, CUstream stream, CUdeviceptr input, CUdeviceptr output, size_t bytes) {
  CUdeviceptr scratch = 0;
  CU_CHECK(cuMemAllocFromPoolAsync(&scratch, bytes, pool, stream));
  CUresult rc = cuMemcpyDtoDAsync(input, scratch, bytes, stream);  // source first: backwards
  if (rc == CUDA_SUCCESS) rc = cuMemcpyDtoDAsync(output, scratch, bytes, stream);
  const CUresult freed = cuMemFreeAsync(scratch, stream);
  CU_CHECK(rc);
  CU_CHECK(freed);
}

}  // namespace ex13
