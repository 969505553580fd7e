// Wrong (R2): passes one stride per dimension, the innermost (the element's size) first
//
// As NumPy's strides: {element size, row pitch}. The reference takes rank - 1 strides, the first
// from one row to the next, so the driver reads the element size as the row pitch. `r.strides ==
// {rowPitchBytes}` fails.
#include "exercises.hpp"

namespace ex21 {

CUresult encodeTile(PFN_cuTensorMapEncodeTiled_v12000 encode, CUtensorMap* map, const MatrixView& m,
                    uint32_t tileRows, uint32_t tileCols) {
  const cuuint64_t dims[2] = {m.cols, m.rows};  // innermost first
  const cuuint64_t strides[2] = {sizeof(float), m.rowPitchBytes};  // element, then row
  const cuuint32_t box[2] = {tileCols, tileRows};
  const cuuint32_t elementStrides[2] = {1, 1};
  return encode(map, m.type, 2, reinterpret_cast<void*>(m.base), dims, strides, box, elementStrides,
                CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
}

}  // namespace ex21
