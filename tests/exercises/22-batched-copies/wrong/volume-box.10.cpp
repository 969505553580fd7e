// Wrong (R6): ignores what cuMemcpy3DBatchAsync returns
//
// "An asynchronous copy reports its errors later, at the next synchronisation": some do, but a
// refused call enqueued nothing, and the caller reads a packed box that never arrived. In "R6: a
// refused call throws", copyBox returns and `throws(...)` fails.
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
  if (!inside(at.x, box.width, volumeSize.width) || !inside(at.y, box.height, volumeSize.height) ||
      !inside(at.z, box.depth, volumeSize.depth))
    throw std::invalid_argument("the box does not lie within the volume");
  if (box.width == 0 || box.height == 0 || box.depth == 0) return;
#if CUDA_VERSION >= 12080
  CUDA_MEMCPY3D_BATCH_OP op{};
  op.src.type = op.dst.type = CU_MEMCPY_OPERAND_TYPE_POINTER;
  op.src.op.ptr.ptr = volume + (at.z * volumeSize.height + at.y) * volumeSize.width + at.x;
  op.src.op.ptr.rowLength = volumeSize.width;
  op.src.op.ptr.layerHeight = volumeSize.height;
  op.dst.op.ptr.ptr = packed;
  op.extent = {box.width, box.height, box.depth};
  op.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
  wb::memcpy3DBatchAsync(1, &op, 0, stream);  // errors surface at the next synchronisation
#else
  (void)volume, (void)packed, (void)stream;
  throw std::runtime_error("cuMemcpy3DBatchAsync came with CUDA 12.8");
#endif
}

}  // namespace ex22
