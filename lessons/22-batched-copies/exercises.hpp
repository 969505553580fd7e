// The exercises of lesson 22 (batched copies): their tasks are in exercises.cpp beside this file,
// their checks in tests/exercises/exercise22_batched_copies.cpp. The types are the course's own, so
// that this header compiles with every CUDA 12.x (CUmemcpyAttributes came with 12.8).
#pragma once

#include "workbook.hpp"

#include <cstddef>
#include <vector>

namespace ex22 {

// One copy of bytes from src to dst; each an address of unified addressing: device, pinned or
// pageable memory.
struct BlockCopy {
  CUdeviceptr dst, src;
  size_t bytes;
};

// Exercise 1: enqueues every copy of blocks into stream: one batch where the stream takes one,
// one cuMemcpyAsync per copy where it does not.
void copyBlocks(const std::vector<BlockCopy>& blocks, CUstream stream);

// Exercise 2: the first rule of cuMemcpyBatchAsync's reference that a batch breaks, and where.
enum class BatchFault {
  None,
  NoAttributes,              // numAttrs is 0
  MoreAttributesThanCopies,  // numAttrs > count
  FirstIndexNotZero,         // attrsIdxs[0] != 0
  IndexNotIncreasing,        // attrsIdxs[k] <= attrsIdxs[k - 1]
  IndexPastLastCopy,         // the last attrsIdxs entry >= count
  InvalidAccessOrder,        // srcAccessOrder not STREAM, DURING_API_CALL or ANY
};
// Entry k of a batch's attributes: attrsIdxs[k] and attrs[k].srcAccessOrder (as a number).
struct AttrEntry {
  size_t firstCopy;
  unsigned srcAccessOrder;
};
// at: the position k of the entry at fault, or SIZE_MAX for a fault of the whole batch (and None).
struct BatchCheck {
  BatchFault fault;
  size_t at;
};
BatchCheck checkBatch(size_t count, const std::vector<AttrEntry>& entries);

// Exercise 3: the box of a packed volume of bytes, copied packed into packed by cuMemcpy3DBatchAsync.
struct Extent {
  size_t width, height, depth;  // bytes along a row, rows along a layer, layers
};
struct Offset {
  size_t x, y, z;
};
void copyBox(CUdeviceptr volume, Extent volumeSize, Offset at, Extent box, CUdeviceptr packed, CUstream stream);

}  // namespace ex22
