// The exercises of lesson 21 (tensor maps): their tasks are in exercises.cpp beside this file,
// their checks in tests/exercises/exercise21_tensor_maps.cpp.
#pragma once

#include "workbook.hpp"

#include <cudaTypedefs.h>

#include <cstdint>
#include <string>

namespace ex21 {

// Exercise 1: cuTensorMapEncodeTiled from the driver library at libraryPath, opened with dlopen.
PFN_cuTensorMapEncodeTiled_v12000 findTensorMapEncoder(const std::string& libraryPath);

// A row-major matrix in device memory: rows of cols elements of type, rowPitchBytes apart.
struct MatrixView {
  CUdeviceptr base = 0;
  uint64_t rows = 0, cols = 0;
  uint64_t rowPitchBytes = 0;
  CUtensorMapDataType type = CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
};

// Exercise 2: a map of m whose box is tileRows x tileCols elements, through encode; its answer.
CUresult encodeTile(PFN_cuTensorMapEncodeTiled_v12000 encode, CUtensorMap* map, const MatrixView& m,
                    uint32_t tileRows, uint32_t tileCols);

// Exercise 3: the first rule of cuTensorMapEncodeTiled a tile request breaks, in this order.
enum class TileProblem {
  None,
  AddressAlignment,   // base not 16-byte aligned
  DimensionRange,     // rows or cols not 1 to 2^32
  PitchMultipleOf16,  // rowPitchBytes not a multiple of 16
  PitchTooLarge,      // rowPitchBytes 2^40 or more
  BoxRange,           // tileRows or tileCols not 1 to 256
  BoxInnerBytes,      // tileCols x element size not a multiple of 16
  SwizzleSpan,        // a swizzled box's tileCols x element size past the swizzle's span
  NanFillNotFloat,    // the NaN fill for a type that is not floating-point
};

struct TileRequest {
  MatrixView matrix;
  uint32_t tileRows = 0, tileCols = 0;
  CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_NONE;
  CUtensorMapFloatOOBfill fill = CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE;
};

TileProblem tileProblem(const TileRequest& request);

}  // namespace ex21
