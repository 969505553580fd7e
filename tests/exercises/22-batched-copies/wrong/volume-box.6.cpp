// Wrong (R5): hands a box of 0 bytes to the driver
//
// "Nothing to copy is nothing to do" is true of cuMemcpyAsync with 0 bytes; a 3D operation's
// extents "must not be 0" (the reference), and the call is refused: copyBox throws where the task
// says return, and the check sees a call.
#include "exercises.hpp"

#include <stdexcept>

namespace ex22 {

namespace {

bool inside(size_t at, size_t extent, size_t size) { return at <= size && extent <= size - at; }

}  // namespace

void copyBox(CUdeviceptr volume, Extent volumeSize, Offset at, Extent box, CUdeviceptr packed, CUstream stream) {
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
