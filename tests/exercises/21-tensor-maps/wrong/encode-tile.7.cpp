// Wrong (R1): calls the linked driver's cuTensorMapEncodeTiled instead of the encode it was given
//
// It compiles where the toolkit's cuda.h is, and links where libcuda is: exactly what exercise 1
// avoids. The check's encoder is never called: `r.calls == 1` fails.
#include "exercises.hpp"

namespace ex21 {

CUresult encodeTile(PFN_cuTensorMapEncodeTiled_v12000 encode, CUtensorMap* map, const MatrixView& m,
                    uint32_t tileRows, uint32_t tileCols) {
  const cuuint64_t dims[2] = {m.cols, m.rows};  // innermost first
  const cuuint64_t strides[1] = {m.rowPitchBytes};
  const cuuint32_t box[2] = {tileCols, tileRows};
  const cuuint32_t elementStrides[2] = {1, 1};
  (void)encode;
  return cuTensorMapEncodeTiled(map, m.type, 2, reinterpret_cast<void*>(m.base), dims, strides, box, elementStrides,
                CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
}

}  // namespace ex21
