// Wrong (R2): gives the row stride in elements, not bytes
//
// Strides are in elements in most array libraries; globalStrides are in bytes. `r.strides ==
// {rowPitchBytes}` fails (and 208 floats, 832 bytes, becomes 208, which is no multiple of 16).
#include "exercises.hpp"

namespace ex21 {

CUresult encodeTile(PFN_cuTensorMapEncodeTiled_v12000 encode, CUtensorMap* map, const MatrixView& m,
                    uint32_t tileRows, uint32_t tileCols) {
  const cuuint64_t dims[2] = {m.cols, m.rows};  // innermost first
  const cuuint64_t strides[1] = {m.rowPitchBytes / sizeof(float)};  // the pitch in elements
  const cuuint32_t box[2] = {tileCols, tileRows};
  const cuuint32_t elementStrides[2] = {1, 1};
  return encode(map, m.type, 2, reinterpret_cast<void*>(m.base), dims, strides, box, elementStrides,
                CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
}

}  // namespace ex21
