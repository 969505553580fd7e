// Wrong (R2): lists the dimensions as C declares the array, rows first
//
// A row-major float m[rows][cols] reads "rows, cols"; the reference lists the innermost dimension
// first. `r.dims == {cols, rows}` fails, and the TMA box comes from the wrong place.
#include "exercises.hpp"

namespace ex21 {

CUresult encodeTile(PFN_cuTensorMapEncodeTiled_v12000 encode, CUtensorMap* map, const MatrixView& m,
                    uint32_t tileRows, uint32_t tileCols) {
  const cuuint64_t dims[2] = {m.rows, m.cols};
  const cuuint64_t strides[1] = {m.rowPitchBytes};
  const cuuint32_t box[2] = {tileCols, tileRows};
  const cuuint32_t elementStrides[2] = {1, 1};
  return encode(map, m.type, 2, reinterpret_cast<void*>(m.base), dims, strides, box, elementStrides,
                CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
}

}  // namespace ex21
