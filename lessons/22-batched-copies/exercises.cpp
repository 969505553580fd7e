// Lesson 22's exercises. Replace each body with your solution, then run: cmake --build build --target exercises-22
#include "exercises.hpp"
#include "exercise.hpp"

// The starting bodies use none of their parameters yet (warnings are errors in some builds).
#pragma GCC diagnostic ignored "-Wunused-parameter"

namespace ex22 {

// Exercise 1 of 3 (scattered-blocks): Scattered blocks in one call, and where one call is refused
//
// Task: A cache of key-value blocks moves many small blocks between host and device memory per
// request, each from and to its own place. Write copyBlocks. Where the stream takes a batch, use
// wb::memcpyBatchAsync (common/compat.hpp) for cuMemcpyBatchAsync. Two kinds of stream do not take a
// batch: the legacy stream, which the reference refuses, as NULL and as CU_STREAM_LEGACY; and a
// stream that is capturing (cuStreamIsCapturing), which refused it on driver 580. A batch entry of 0
// bytes may be refused.
//
//   R1: It enqueues every copy of blocks into stream and returns at once, without waiting for any
//       of them.
//   R2: Where the stream takes a batch, it makes one cuMemcpyBatchAsync call for all the copies,
//       whose sources and destinations may be device, pinned or pageable memory.
//   R3: Each copy of the batch has a srcAccessOrder of CU_MEMCPY_SRC_ACCESS_ORDER_STREAM: the caller
//       may still be producing a source with work queued earlier in the stream, so no source may be
//       read before the stream reaches its copy.
//   R4: It leaves copies of 0 bytes out, and makes no call at all when nothing is left.
//   R5: On the legacy stream, NULL or CU_STREAM_LEGACY, it enqueues one cuMemcpyAsync per copy of
//       more than 0 bytes, in the list's order, so that the copies run in order.
//   R6: On a capturing stream it enqueues one cuMemcpyAsync per copy of more than 0 bytes, captured
//       into the graph, and no batch.
//   R7: If a call is refused (the batch, any cuMemcpyAsync, cuStreamIsCapturing), it throws
//       (CU_CHECK does).
//   R8: It takes nothing it does not give back.
//   R9: It leaves the calling thread's current context as it is.
//
// The check: exercise22.scattered-blocks runs in a context it created. It stands between the code
// and cuMemcpyBatchAsync, so it sees every batch: its count, sizes, each copy's srcAccessOrder and
// stream. With a gate kernel holding a created stream it calls copyBlocks on pinned and device
// memory with a copy of 0 bytes in the middle, and verifies that it returned while the gate was
// closed, with one batch of the copies of more than 0 bytes, each in stream order, and no
// cuMemcpyAsync; it then writes the pinned source, opens the gate and verifies that the new bytes
// arrived and every destination holds its source. It copies pageable memory both ways with odd
// sizes. On NULL and on CU_STREAM_LEGACY it verifies one cuMemcpyAsync per copy and no batch, and
// that two copies to the same bytes leave the second one's. It captures copyBlocks into a graph
// and verifies that the graph holds one copy node per copy and, launched, copies them. An empty
// list, and one of copies of 0 bytes, must make no call. It makes the batch, then the first and the
// second of two cuMemcpyAsync on the legacy stream, then cuStreamIsCapturing fail, and verifies
// that copyBlocks threw each time. After the created-stream, legacy-stream and failure cases it
// verifies that nothing is left held, and after the first that the context stack is as it was.
//
// Learn it in: lesson 22, step 4 ("The streams a batch takes")
void copyBlocks(const std::vector<BlockCopy>& blocks, CUstream stream) {
  wb::notDone();
}

// Exercise 2 of 3 (batch-rules): Say which rule a batch breaks, now that 13.0 has no failIdx
//
// Task: CUDA 13.0's cuMemcpyBatchAsync answers a malformed batch with CUDA_ERROR_INVALID_VALUE and
// nothing more (12.8's failIdx is gone), so a library that builds batches checks them first and says
// what is wrong. Write checkBatch: given count (the number of copies) and entries (entry k is
// attrsIdxs[k] and attrs[k].srcAccessOrder), check the rules the reference states.
//
//   R1: NoAttributes when entries is empty (every copy needs attributes).
//   R2: MoreAttributesThanCopies when there are more entries than count.
//   R3: FirstIndexNotZero when entries[0].firstCopy is not 0.
//   R4: IndexNotIncreasing at the first k from 1 on whose firstCopy is not greater than entry
//       k - 1's.
//   R5: IndexPastLastCopy when the last entry's firstCopy is count or more.
//   R6: InvalidAccessOrder at the first k whose srcAccessOrder is none of
//       CU_MEMCPY_SRC_ACCESS_ORDER_STREAM (1), DURING_API_CALL (2) and ANY (3).
//   R7: at is the position k of the entry at fault (for IndexPastLastCopy, the last entry's), not a
//       copy's index; for the two faults of the whole batch, and for None when every rule holds,
//       at is SIZE_MAX.
//   R8: It returns the first rule broken, in the order R1 to R6, or None.
//   R9: Values may be anything a size_t or unsigned holds, SIZE_MAX included: no sum may wrap.
//
// The check: exercise22.batch-rules calls checkBatch on every rule broken alone, at the first, a
// middle and the last entry; on batches that break two rules (the earlier rule in the order above
// must win, and the first entry at fault); on the edges (count 0, one copy, equal neighbours,
// a last index of count - 1 and of count, srcAccessOrder 0, 4 and 0x7FFFFFFF, indices near
// SIZE_MAX, two equal indices of SIZE_MAX); and on 2000 batches drawn from a fixed seed, each
// compared with the answer the rules above give. It needs no GPU.
//
// Learn it in: lesson 22, step 5 ("Malformed batches")
BatchCheck checkBatch(size_t count, const std::vector<AttrEntry>& entries) {
  wb::notDone();
}

// Exercise 3 of 3 (volume-box): A box out of a volume with one 3D batch
//
// Task: A volume of bytes lies in memory packed: volumeSize.depth layers of volumeSize.height rows
// of volumeSize.width bytes, each row right after the previous one. Write copyBox, with
// wb::memcpy3DBatchAsync (common/compat.hpp) for cuMemcpy3DBatchAsync. The driver cannot know how
// large the volume is, so a box that does not lie wholly inside it is refused by you.
//
//   R1: It copies the box of box.width x box.height x box.depth bytes whose first byte is at `at`
//       (x along a row, y the row, z the layer) into packed, which holds it packed (box.width bytes
//       a row, rows and layers back to back), and writes nothing past it.
//   R2: It does so with one cuMemcpy3DBatchAsync call of one operation between two pointer
//       operands, its srcAccessOrder CU_MEMCPY_SRC_ACCESS_ORDER_STREAM (the volume may still be
//       produced by earlier work in the stream), its flags 0, in stream.
//   R3: It returns without waiting for the copy.
//   R4: A box that does not lie wholly inside the volume throws std::invalid_argument before any
//       CUDA call, whatever the values (near SIZE_MAX too, where a sum wraps around), a box of no
//       bytes that starts outside the volume included.
//   R5: A box inside the volume with a width, height or depth of 0 has nothing to copy: it makes no
//       call and returns (the reference refuses a 0 extent).
//   R6: If the call is refused, it throws (CU_CHECK does).
//
// The check: exercise22.volume-box stands between the code and cuMemcpy3DBatchAsync and sees every
// call. On a volume of 37 x 11 x 5 bytes in device memory and on one in pinned memory it copies
// boxes inside (one at (3, 2, 1) of 17 x 6 x 3), the whole volume, the last byte alone, whole rows,
// one column, one layer, and verifies every byte of packed and that nothing past the box's bytes
// was written; that each was one call of one operation, in stream order, with flags 0, in the
// stream given; and, with a gate kernel holding the stream, that copyBox returned while the gate
// was closed. Boxes past each edge by one byte, offsets and sizes near SIZE_MAX, and boxes of 0
// bytes that start past an edge must throw std::invalid_argument with no call; a box inside with
// any extent 0 must return with no call. It makes the call fail and verifies that copyBox threw.
//
// Learn it in: lesson 22, step 6 ("cuMemcpy3DBatchAsync: pitched boxes and CUDA arrays")
void copyBox(CUdeviceptr volume, Extent volumeSize, Offset at, Extent box, CUdeviceptr packed, CUstream stream) {
  wb::notDone();
}

}  // namespace ex22
