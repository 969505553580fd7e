// Lesson 22's exercises. Replace each body with your solution, then run: cmake --build build --target exercises-22
#include "exercises.hpp"
#include "exercise.hpp"

// The starting bodies use none of their parameters yet (warnings are errors in some builds).
#pragma GCC diagnostic ignored "-Wunused-parameter"

namespace ex22 {

// Exercise 1 of 3 (scattered-blocks): Scattered blocks in one call, and where one call is refused
//
// Task: A cache of key-value blocks moves many small blocks between host and device memory per
// request, each from and to its own place. Write copyBlocks: enqueue every copy of blocks into stream
// and return at once, without waiting for any of them. Where the stream takes a batch, make one
// cuMemcpyBatchAsync call (wb::memcpyBatchAsync, common/compat.hpp) for all the copies, each with a
// srcAccessOrder of CU_MEMCPY_SRC_ACCESS_ORDER_STREAM: the caller may still be producing a source
// with work queued earlier in the stream, so no source may be read before the stream reaches its
// copy. Leave copies of 0 bytes out (nothing to copy; a batch entry of 0 bytes may be refused), and
// make no call at all when nothing is left. Two kinds of stream do not take a batch: the legacy
// stream, which the reference refuses, as NULL and as CU_STREAM_LEGACY; and a stream that is
// capturing (cuStreamIsCapturing), which refused it on driver 580. For those, enqueue one
// cuMemcpyAsync per copy of more than 0 bytes, in the list's order, so that the copies run in order,
// or are captured into the graph. Sources and destinations may be device, pinned or pageable memory.
// If a call is refused, throw (CU_CHECK does). Take nothing you do not give back, and leave the
// calling thread's current context as it is.
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
// list, and one of copies of 0 bytes, must make no call. It makes the batch and then a
// cuMemcpyAsync fail and verifies that copyBlocks threw. After the created-stream, legacy-stream and
// failure cases it verifies that nothing is left held, and after the first that the context stack
// is as it was.
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
// attrsIdxs[k] and attrs[k].srcAccessOrder), check the rules the reference states, in this order,
// and return the first one broken: NoAttributes when entries is empty (every copy needs
// attributes); MoreAttributesThanCopies when there are more entries than count; FirstIndexNotZero
// when entries[0].firstCopy is not 0; IndexNotIncreasing at the first k from 1 on whose firstCopy
// is not greater than entry k - 1's; IndexPastLastCopy when the last entry's firstCopy is count or
// more; InvalidAccessOrder at the first k whose srcAccessOrder is none of
// CU_MEMCPY_SRC_ACCESS_ORDER_STREAM (1), DURING_API_CALL (2) and ANY (3). at is the position k of
// the entry at fault (for IndexPastLastCopy, the last entry's), not a copy's index; for the two
// faults of the whole batch, and for None when every rule holds, at is SIZE_MAX. Values may be
// anything a size_t or unsigned holds.
//
// The check: exercise22.batch-rules calls checkBatch on every rule broken alone, at the first, a
// middle and the last entry; on batches that break two rules (the earlier rule in the order above
// must win, and the first entry at fault); on the edges (count 0, one copy, equal neighbours,
// a last index of count - 1 and of count, srcAccessOrder 0, 4 and 0x7FFFFFFF, indices near
// SIZE_MAX); and on 2000 batches drawn from a fixed seed, each compared with the answer the rules
// above give. It needs no GPU.
//
// Learn it in: lesson 22, step 5 ("Malformed batches")
BatchCheck checkBatch(size_t count, const std::vector<AttrEntry>& entries) {
  wb::notDone();
}

// Exercise 3 of 3 (volume-box): A box out of a volume with one 3D batch
//
// Task: A volume of bytes lies in memory packed: volumeSize.depth layers of volumeSize.height rows
// of volumeSize.width bytes, each row right after the previous one. Write copyBox: copy the box of
// box.width x box.height x box.depth bytes whose first byte is at `at` (x along a row, y the row,
// z the layer) into packed, which holds it packed (box.width bytes a row, rows and layers back to
// back), with one cuMemcpy3DBatchAsync call (wb::memcpy3DBatchAsync, common/compat.hpp) of one
// operation between two pointer operands, its srcAccessOrder CU_MEMCPY_SRC_ACCESS_ORDER_STREAM (the
// volume may still be produced by earlier work in the stream), its flags 0, in stream; return
// without waiting for the copy. The driver cannot know how large the volume is, so a box that does
// not lie wholly inside it is refused by you: throw std::invalid_argument before any CUDA call,
// whatever the values (near SIZE_MAX too, where a sum wraps around). A box with a width, height or
// depth of 0 has nothing to copy: make no call and return (the reference refuses a 0 extent). If
// the call is refused, throw (CU_CHECK does).
//
// The check: exercise22.volume-box stands between the code and cuMemcpy3DBatchAsync and sees every
// call. On a volume of 37 x 11 x 5 bytes in device memory and on one in pinned memory it copies
// boxes inside (one at (3, 2, 1) of 17 x 6 x 3), the whole volume, the last byte alone, whole rows,
// one column, one layer, and verifies every byte of packed and that nothing past the box's bytes
// was written; that each was one call of one operation, in stream order, with flags 0, in the
// stream given; and, with a gate kernel holding the stream, that copyBox returned while the gate
// was closed. Boxes past each edge by one byte, and offsets and sizes near SIZE_MAX, must throw
// std::invalid_argument with no call; a box with any extent 0 must return with no call. It makes
// the call fail and verifies that copyBox threw.
//
// Learn it in: lesson 22, step 6 ("cuMemcpy3DBatchAsync: pitched boxes and CUDA arrays")
void copyBox(CUdeviceptr volume, Extent volumeSize, Offset at, Extent box, CUdeviceptr packed, CUstream stream) {
  wb::notDone();
}

}  // namespace ex22
