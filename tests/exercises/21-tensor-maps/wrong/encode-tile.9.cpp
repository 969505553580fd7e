// Wrong (R5): retains device 0's primary context "so that a context is current", and keeps it
//
// Most driver calls need a current context, so the engineer makes sure of one before encoding. A
// tensor map is encoded on the host and needs none, and the retain is never released: each call
// keeps one more reference to the primary context. In "R1 R2 R3 R4 R5: FLOAT32, FLOAT16 and UINT8
// matrices ...", `wbx::holdings().differenceFrom(before) == ""` fails (a primary retain more).
#include "exercises.hpp"

namespace ex21 {

CUresult encodeTile(PFN_cuTensorMapEncodeTiled_v12000 encode, CUtensorMap* map, const MatrixView& m,
                    uint32_t tileRows, uint32_t tileCols) {
  CUdevice device = 0;
  CU_CHECK(cuDeviceGet(&device, 0));
  CUcontext primary = nullptr;
  CU_CHECK(cuDevicePrimaryCtxRetain(&primary, device));  // never released
  CU_CHECK(cuCtxSetCurrent(primary));
  const cuuint64_t dims[2] = {m.cols, m.rows};  // innermost first
  const cuuint64_t strides[1] = {m.rowPitchBytes};
  const cuuint32_t box[2] = {tileCols, tileRows};
  const cuuint32_t elementStrides[2] = {1, 1};
  return encode(map, m.type, 2, reinterpret_cast<void*>(m.base), dims, strides, box, elementStrides,
                CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
}

}  // namespace ex21
