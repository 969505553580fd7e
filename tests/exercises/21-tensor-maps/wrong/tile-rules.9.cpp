// Wrong (R8): checks the box's inner bytes before the box's size
//
// The rules in another order than the task's: for 257 float columns (1028 bytes, no multiple of
// 16) it answers BoxInnerBytes where BoxRange comes first. The case "257 tile columns" fails.
#include "exercises.hpp"

namespace ex21 {

namespace {

uint64_t elementSize(CUtensorMapDataType type) {
  switch (type) {
    case CU_TENSOR_MAP_DATA_TYPE_UINT8: return 1;
    case CU_TENSOR_MAP_DATA_TYPE_UINT16:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT16:
    case CU_TENSOR_MAP_DATA_TYPE_BFLOAT16: return 2;
    case CU_TENSOR_MAP_DATA_TYPE_UINT64:
    case CU_TENSOR_MAP_DATA_TYPE_INT64:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT64: return 8;
    default: return 4;  // UINT32, INT32, FLOAT32, FLOAT32_FTZ, TFLOAT32, TFLOAT32_FTZ
  }
}

bool floatingPoint(CUtensorMapDataType type) {
  switch (type) {
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT16:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT32:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT64:
    case CU_TENSOR_MAP_DATA_TYPE_BFLOAT16:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ:
    case CU_TENSOR_MAP_DATA_TYPE_TFLOAT32:
    case CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ: return true;
    default: return false;
  }
}

uint64_t swizzleSpan(CUtensorMapSwizzle swizzle) {
  switch (swizzle) {
    case CU_TENSOR_MAP_SWIZZLE_32B: return 32;
    case CU_TENSOR_MAP_SWIZZLE_64B: return 64;
    case CU_TENSOR_MAP_SWIZZLE_128B: return 128;
    default: return 0;  // no swizzle: no span
  }
}

bool inRange(uint64_t v, uint64_t most) { return v >= 1 && v <= most; }

}  // namespace

TileProblem tileProblem(const TileRequest& request) {
  const MatrixView& m = request.matrix;
  const uint64_t innerBytes = uint64_t{request.tileCols} * elementSize(m.type);
  if (m.base % 16 != 0) return TileProblem::AddressAlignment;
  if (!inRange(m.rows, 1ull << 32) || !inRange(m.cols, 1ull << 32)) return TileProblem::DimensionRange;
  if (m.rowPitchBytes % 16 != 0) return TileProblem::PitchMultipleOf16;
  if (m.rowPitchBytes >= (1ull << 40)) return TileProblem::PitchTooLarge;
  if (innerBytes % 16 != 0) return TileProblem::BoxInnerBytes;
  if (!inRange(request.tileRows, 256) || !inRange(request.tileCols, 256)) return TileProblem::BoxRange;
  const uint64_t span = swizzleSpan(request.swizzle);
  if (span && innerBytes > span) return TileProblem::SwizzleSpan;
  if (request.fill == CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA && !floatingPoint(m.type))
    return TileProblem::NanFillNotFloat;
  return TileProblem::None;
}

}  // namespace ex21
