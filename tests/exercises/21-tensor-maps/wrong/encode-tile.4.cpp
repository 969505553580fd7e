// Wrong (R2): gives the box as tile rows, then columns
//
// The dimensions were put innermost first, the box was not. `r.box == {tileCols, tileRows}` fails.
#include "exercises.hpp"

namespace ex21 {

CUresult encodeTile(PFN_cuTensorMapEncodeTiled_v12000 encode, CUtensorMap* map, const MatrixView& m,
                    uint32_t tileRows, uint32_t tileCols) {
  const cuuint64_t dims[2] = {m.cols, m.rows};  // innermost first
  const cuuint64_t strides[1] = {m.rowPitchBytes};
  const cuuint32_t box[2] = {tileRows, tileCols};
  const cuuint32_t elementStrides[2] = {1, 1};
  return encode(map, m.type, 2, reinterpret_cast<void*>(m.base), dims, strides, box, elementStrides,
                CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
}

}  // namespace ex21
