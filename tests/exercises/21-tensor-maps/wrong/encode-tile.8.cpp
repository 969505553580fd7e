// Wrong (R4): refuses a row pitch that is no multiple of 16 bytes itself, without calling encode
//
// "Why ask the driver about what we know it refuses": the task leaves the rules to the driver, whose
// answer encodeTile returns, and rules kept in two places drift apart. In "R1 R2 R4 R5: rows 804
// bytes apart ...", encode is never called and `r.calls == 1` fails.
#include "exercises.hpp"

namespace ex21 {

CUresult encodeTile(PFN_cuTensorMapEncodeTiled_v12000 encode, CUtensorMap* map, const MatrixView& m,
                    uint32_t tileRows, uint32_t tileCols) {
  if (m.rowPitchBytes % 16 != 0) return CUDA_ERROR_INVALID_VALUE;  // the driver would refuse it anyway
  const cuuint64_t dims[2] = {m.cols, m.rows};  // innermost first
  const cuuint64_t strides[1] = {m.rowPitchBytes};
  const cuuint32_t box[2] = {tileCols, tileRows};
  const cuuint32_t elementStrides[2] = {1, 1};
  return encode(map, m.type, 2, reinterpret_cast<void*>(m.base), dims, strides, box, elementStrides,
                CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
}

}  // namespace ex21
