// Wrong (R4): returns for a box of no bytes before checking where it starts
//
// "Nothing to copy, nothing to check": but a box of no bytes whose offset lies past the volume is a
// caller's wrong offset, which the task refuses whatever the values; it is told so now, not when
// the same offset comes with a size. In "R4: a box past an edge ...", the box of width 0 at x = 38
// returns and `CHECK(invalid)` fails.
#include "exercises.hpp"

#include <stdexcept>

namespace ex22 {

namespace {

// Whether [at, at + extent) lies within [0, size), written so that nothing can wrap around.
bool inside(size_t at, size_t extent, size_t size) { return at <= size && extent <= size - at; }

}  // namespace

// One operation: the source is the volume's pointer at the box's first byte, with the volume's row
// length and layer height (in elements, which are bytes for pointer operands), so the driver steps
// over the rest of each row and layer; the destination is packed (0 and 0: tightly packed).
void copyBox(CUdeviceptr volume, Extent volumeSize, Offset at, Extent box, CUdeviceptr packed, CUstream stream) {
  if (box.width == 0 || box.height == 0 || box.depth == 0) return;  // nothing to copy
  if (!inside(at.x, box.width, volumeSize.width) || !inside(at.y, box.height, volumeSize.height) ||
      !inside(at.z, box.depth, volumeSize.depth))
    throw std::invalid_argument("the box does not lie within the volume");
#if CUDA_VERSION >= 12080
  CUDA_MEMCPY3D_BATCH_OP op{};
  op.src.type = op.dst.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
  op.src.op.ptr.ptr = volume + (at.z * volumeSize.height + at.y) * volumeSize.width + at.x;
  op.src.op.ptr.rowLength = volumeSize.width;
  op.src.op.ptr.layerHeight = volumeSize.height;
  op.dst.op.ptr.ptr = packed;
  op.extent = {box.width, box.height, box.depth};
  op.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
  CU_CHECK(wb::memcpy3DBatchAsync(1, &op, 0, stream));
#else
  (void)volume, (void)packed, (void)stream;
  throw std::runtime_error("cuMemcpy3DBatchAsync came with CUDA 12.8");
#endif
}

}  // namespace ex22
