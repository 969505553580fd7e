// Lesson 21's exercises. Replace each body with your solution, then run: cmake --build build --target exercises-21
#include "exercises.hpp"
#include "exercise.hpp"

// The starting bodies use none of their parameters yet (warnings are errors in some builds).
#pragma GCC diagnostic ignored "-Wunused-parameter"

namespace ex21 {

// Exercise 1 of 3 (find-encoder): cuTensorMapEncodeTiled from a driver opened at run time
//
// Task: A library that builds tensor maps must load on machines without a GPU, so it links no
// libcuda and finds the encoder when it needs it. Write findTensorMapEncoder: open the library at
// libraryPath, take cuDriverGetVersion and cuGetProcAddress_v2 from it with dlsym, ask the driver's
// version, then ask for the encoder. A driver older than your toolkit refuses a version newer than
// itself with CUDA_ERROR_INVALID_VALUE, so ask at the version of PFN_cuTensorMapEncodeTiled_v12000,
// not at CUDA_VERSION.
//
//   R1: It opens the library with dlopen at libraryPath exactly (it may be a copy of a driver
//       anywhere), not the loader's choice of libcuda.
//   R2: It opens it RTLD_LOCAL: nothing of the library joins the process's global symbols.
//   R3 (not checked: only a library with a symbol left to bind tells it from RTLD_LAZY): It
//       opens it RTLD_NOW.
//   R4: It asks cuDriverGetVersion first: CUDA_ERROR_STUB_LIBRARY means the toolkit's stub, not a
//       driver (the message says "stub"); any other error, or a version below 12000, means no
//       driver with tensor maps (the message says "12.0"); 12000 and newer are drivers with them.
//   R5: It asks cuGetProcAddress_v2 for "cuTensorMapEncodeTiled" at version 12000, flags
//       CU_GET_PROC_ADDRESS_DEFAULT.
//   R6: It checks that call's CUresult, its status (CU_GET_PROC_ADDRESS_SUCCESS) and the pointer:
//       a driver without the function answers CUDA_SUCCESS and no pointer.
//   R7: It takes nothing with dlsym by the function's own name.
//   R8: On success it returns the pointer and leaves the library open (the function lives in it).
//   R9: On every failure it closes what it opened and throws std::runtime_error whose message
//       contains libraryPath and says why, a path with no file or no library included.
//
// The check: exercise21.find-encoder gives findTensorMapEncoder copies of a fake libcuda of its own
// that behaves as a driver of CUDA 12.4 and of CUDA 12.0 with tensor maps, as the toolkit's stub,
// as a CUDA 11.8 driver, as a 12.4 driver whose cuDriverGetVersion fails, and as a 13.0 driver
// without the function. For the 12.4 and 12.0 drivers it verifies that the pointer lies in that
// copy (dladdr), that the fake was asked at version 12000, that the copy is still open, that none
// of its symbols is among the process's global ones (dlsym(RTLD_DEFAULT)), and that calling the
// pointer reaches the fake's encoder. For the others it verifies that findTensorMapEncoder threw
// std::runtime_error naming the path ("stub" for the stub, "12.0" for 11.8 and for the failed
// version) and left the copy closed (dlopen with RTLD_NOLOAD finds it not loaded). It also gives a
// path that does not exist, and a file that is no library, and expects the throw; and the machine's
// own libcuda.so.1, from which it expects the function the linked driver's cuGetProcAddress gives
// at 12000. It cannot tell a flag other than CU_GET_PROC_ADDRESS_DEFAULT for this function (it has
// no per-thread variant).
//
// Learn it in: lesson 21, step 1 ("The driver, opened at run time")
PFN_cuTensorMapEncodeTiled_v12000 findTensorMapEncoder(const std::string& libraryPath) {
  wb::notDone();
}

// Exercise 2 of 3 (encode-tile): A tensor map for a tile of a row-major matrix
//
// Task: Write encodeTile: describe to the TMA unit a tile of tileRows x tileCols elements of the
// row-major matrix m, through encode (the driver's cuTensorMapEncodeTiled, found as in exercise 1).
//
//   R1: It calls encode exactly once, with map as its tensorMap.
//   R2: It passes m.type; rank 2; m.base; globalDim with the innermost dimension first ({m.cols,
//       m.rows}); globalStrides with rank - 1 entries, in bytes ({m.rowPitchBytes}); boxDim
//       {tileCols, tileRows}; elementStrides {1, 1}.
//   R3: It passes CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
//       CU_TENSOR_MAP_L2_PROMOTION_NONE and CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE, so that what a box
//       holds outside the matrix is zero.
//   R4: It returns what encode returned, a refusal included, and checks none of the rules itself
//       (that is exercise 3): a request the driver refuses reaches encode as any other.
//   R5: It holds nothing afterwards.
//
// The check: exercise21.encode-tile passes encode as a function of its own that records every
// argument and then calls the driver's cuTensorMapEncodeTiled. For a FLOAT32 matrix of 300 x 200
// with 832-byte rows and a 4 x 8 tile, a FLOAT16 matrix of 64 x 100 with 224-byte rows and a 16 x
// 32 tile, and a UINT8 matrix of 10 x 1000 with 1008-byte rows and an 8 x 64 tile, it verifies that
// encode was called once, with each argument above, and that encodeTile returned its answer; for
// rows 804 bytes apart, that encode was called likewise and encodeTile returned the driver's
// refusal. It verifies that nothing is left held (the ledger), in both cases. Then it loads the 8 x
// 4 box at column 196, row 298 of the FLOAT32 matrix through the map with a TMA kernel and compares
// it with the matrix, zeros outside. On a device of compute capability below 9.0, which has no
// tensor maps, the exercise reports itself skipped.
//
// Learn it in: lesson 21, step 4 ("A tensor map for a tile of a row-major matrix")
CUresult encodeTile(PFN_cuTensorMapEncodeTiled_v12000 encode, CUtensorMap* map, const MatrixView& m,
                    uint32_t tileRows, uint32_t tileCols) {
  wb::notDone();
}

// Exercise 3 of 3 (tile-rules): The rule a tile request breaks, before the driver says so
//
// Task: cuTensorMapEncodeTiled answers CUDA_ERROR_INVALID_VALUE to every rule broken, and says
// nothing about which. Write tileProblem: which rule an encoding request as in exercise 2 (rank 2,
// no interleave, request.swizzle, request.fill) would break. The element sizes, from the reference:
// UINT8 1; UINT16, FLOAT16, BFLOAT16 2; UINT32, INT32, FLOAT32, FLOAT32_FTZ, TFLOAT32, TFLOAT32_FTZ
// 4; UINT64, INT64, FLOAT64 8. The floating-point types: FLOAT16, FLOAT32, FLOAT64, BFLOAT16,
// FLOAT32_FTZ, TFLOAT32, TFLOAT32_FTZ. Requests use these types and swizzles only.
//
//   R1: AddressAlignment: matrix.base is not a multiple of 16.
//   R2: DimensionRange: matrix.rows or matrix.cols is 0 or more than 2^32.
//   R3: PitchMultipleOf16: matrix.rowPitchBytes is not a multiple of 16 (bytes, not elements);
//       PitchTooLarge: it is 2^40 or more.
//   R4: BoxRange: tileRows or tileCols is 0 or more than 256.
//   R5: BoxInnerBytes: tileCols x the element size is not a multiple of 16, for every type above
//       with its size.
//   R6: SwizzleSpan: with a swizzle of CU_TENSOR_MAP_SWIZZLE_32B, _64B or _128B, tileCols x the
//       element size is more than 32, 64 or 128.
//   R7: NanFillNotFloat: CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA for a type that is not
//       floating-point; every floating-point type above takes it.
//   R8: It returns the first rule broken in the order R1 to R7 (R3's multiple before its size), or
//       TileProblem::None when every rule holds.
//
// The check: exercise21.tile-rules asks tileProblem about requests that each break one rule, or
// two (to check the order), or sit on a rule's edge (address + 16, 2^32 rows and columns, a pitch
// of 816 bytes, a pitch of 2^40 - 16, 256 rows and columns, a 16-byte inner box of each element
// size, a 128-byte box under SWIZZLE_128B, the NaN fill for BFLOAT16), gives every type a box of 16
// bytes and one of 16 bytes and one element, and the NaN fill, and compares each answer with the
// one the rules above give. It calls no driver: the lesson's own tests show the driver refusing
// each rule.
//
// Learn it in: lesson 21, step 5 ("Every rule, and its refusal")
TileProblem tileProblem(const TileRequest& request) {
  wb::notDone();
}

}  // namespace ex21
