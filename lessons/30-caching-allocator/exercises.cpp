// Lesson 30's exercises. Replace each body with your solution, then run: cmake --build build --target exercises-30

// The starting bodies use none of their parameters yet (warnings are errors in some builds).
#pragma GCC diagnostic ignored "-Wunused-parameter"

#include "exercises.hpp"
#include "exercise.hpp"

namespace ex30 {

// Exercise 1 of 4 (map-range): Map the granules a block needs, and only those
//
// Task: The allocator's segment is one reservation of addresses (Segment, given in exercises.hpp);
// physical memory goes behind it only where a block needs it, in whole granules, as PyTorch's
// ExpandableSegment::map does. Write mapRange: find the granules that [offset, offset + bytes) touches
// (from the one holding its first byte to the one holding its last), and give memory to those no run
// maps yet, one cuMemCreate for each stretch of missing granules next to each other.
//
//   R1: Afterwards every granule the range touches is mapped and no other granule was; it returns the
//       bytes it mapped (0 for a range already mapped, or for bytes 0), and creates nothing for
//       granules already mapped.
//   R2: Each stretch of missing granules becomes one run: one cuMemCreate of its size, mapped at its
//       place, released once mapped (the mapping owns the memory), read-write for seg.dev, and
//       recorded in seg.runs (first granule -> granules).
//   R3: A range that ends past seg.capacity throws std::length_error and maps nothing.
//   R4: When a driver call fails, it throws wb::DriverError and the segment is as it was: nothing
//       left created or mapped, seg.runs unchanged, also the runs this call had already mapped.
//
// The check: exercise30.map-range maps, in a segment of 64 granules on device 0, one byte at 0, then
// half a granule to two and a half, then the first three granules again, then the sixth granule, then
// the first seven; after each it verifies what it returned, seg.runs (one run per stretch: the last
// call adds two), how many cuMemCreate calls it made (the check's ledger counts them), that
// cuMemGetAccess says read-write for dev on every granule mapped, and that all of them take a memset
// that reads back. It asks for a range past the capacity (std::length_error, nothing held more). It
// makes the second cuMemMap of a two-stretch call fail, then the first cuMemCreate, and verifies that
// mapRange threw wb::DriverError and that what is held and seg.runs did not change.
//
// Learn it in: lesson 30, step 2 ("Reserve once, map granules on demand")
size_t mapRange(Segment& seg, size_t offset, size_t bytes) {
  wb::notDone();
}

// Exercise 2 of 4 (stream-cache): Reuse a freed block in stream order
//
// Task: A block is freed when the host drops its last reference, while kernels queued in its stream
// may still use it. Handing it at once to work in the same stream is safe (that work runs after
// them); handing it to another stream is safe only once that work has run. Write StreamCache: put
// keeps a freed block with its stream and an event recorded there, take hands out the smallest
// block that fits and is safe for the asking stream, as PyTorch's block pools (keyed by stream) and
// its insert_events / process_events do.
//
//   R1: A block put on stream S is taken on S at once, whatever S still has queued; take hands out
//       the smallest block that holds size (best fit), whole.
//   R2: On another stream T a block is taken only once the work S had queued when it was put has
//       completed (an event recorded on S in put, asked with cuEventQuery in take), and then at once,
//       whatever S queued after the put; take never waits.
//   R3: When no block fits, take returns {0, 0} and changes nothing; a block is handed out once.
//   R4: Every event it creates is destroyed when its block is taken or the cache destroyed.
//
// The check: exercise30.stream-cache holds stream A with the gate kernel (lesson 09) while it puts
// blocks of 8, 2 and 4 MiB (made-up addresses: the cache never touches them) on A, takes 3, 1, 16 and 8
// MiB on A, and verifies the 4, 2, none and 8 MiB blocks and that the gate was still closed. It puts a
// block on A while the gate holds it, takes it on stream B (none), opens the gate and waits for A,
// holds A with a second gate and takes it on B again (the block). It takes a block twice, and a size
// nothing holds. It counts the events made and destroyed (the check's ledger) when every block is
// taken and when a cache holding blocks is destroyed.
//
// Learn it in: lesson 30, step 3 ("A free list per stream, reused in stream order")
void StreamCache::put(CUdeviceptr ptr, size_t size, CUstream stream) {
  wb::notDone();
}

Cached StreamCache::take(size_t size, CUstream stream) {
  wb::notDone();
}

StreamCache::~StreamCache() {}

// Exercise 3 of 4 (grow-in-place): Carve blocks from a segment that grows in place
//
// Task: Put the first two milestones together in Arena: a block comes from the stream's cache if one
// fits (StreamCache::take), or is carved at the top of the segment, right after the last one, with
// mapRange giving memory to what it lacks: the segment grows in place, and no block handed out ever
// moves, as PyTorch's expandable segments grow one segment per stream instead of opening new ones.
//
//   R1: Sizes are rounded up to 512 bytes; a block no cached block serves is carved at seg.base +
//       top(), and top() advances by its rounded size.
//   R2: Before it is handed out, every granule of a block is mapped (mapRange): only the granules it
//       lacks, no more; a cached block whose granules a trim gave back is mapped again.
//   R3: A block keeps its address and contents while it is live, however far the segment grows; no
//       two live blocks overlap; live() lists exactly the blocks handed out and not freed.
//   R4: free puts the block in the cache on the stream given; the next allocation of no more than its
//       size on that stream gets it back, top() unchanged.
//   R5: A block that does not fit in the rest of the segment throws std::length_error; top(), live()
//       and what is mapped do not change.
//
// The check: exercise30.grow-in-place runs on device 0 with exercises 1 and 2 as you wrote them (the
// proofs use their solutions). In a segment of 256 MiB it allocates 1000 bytes, 3 MiB, 10 MiB and
// 1 byte twice on one stream, writing a pattern into each, and verifies the addresses (each right after
// the last, 512-byte steps), top(), that the segment maps exactly the granules up to top(), that
// every pattern reads back after every growth, and live(). It frees the 3 MiB block and allocates 3
// MiB and then 2 MiB (the same address, top() unchanged), frees a 16 MiB block at the top, unmaps its
// run itself as a trim would, allocates 16 MiB again and verifies that cuMemGetAccess says read-write
// on all of it and that it takes a memset. Last it asks for more than the segment has left.
//
// Learn it in: lesson 30, step 4 ("Growing in place: the serving loop replayed")
Arena::Arena(Segment& seg) {
  wb::notDone();
}

CUdeviceptr Arena::allocate(size_t bytes, CUstream stream) {
  wb::notDone();
}

void Arena::free(CUdeviceptr p, CUstream stream) {
  wb::notDone();
}

size_t Arena::top() const {
  wb::notDone();
}

std::vector<std::pair<CUdeviceptr, size_t>> Arena::live() const {
  wb::notDone();
}

// Exercise 4 of 4 (trim-idle): Give memory back at the idle point, no pointer moved
//
// Task: At an idle point (a request finished, a batch ended) a server hands the memory under cached
// blocks back to the driver, so that another process or another pool may use it, while the blocks
// still live (the weights) stay where they are. Write trim: unmap every run of seg that no live block
// touches. A run is unmapped whole (lesson 14), so a run a live block touches by a single byte stays.
//
//   R1: Every run that no live block [ptr, ptr + size) overlaps is unmapped, and its memory goes back to
//       the device; every run one overlaps (by a byte, at either end) stays mapped, with its data;
//       it returns the bytes given back.
//   R2: It waits for the work queued in the context's streams before it unmaps anything (cuMemUnmap
//       does not wait for them, and a freed block's last kernel may still be running there).
//   R3: seg.runs lists exactly the runs still mapped; trimmed with nothing live, nothing is left mapped
//       or held.
//
// The check: exercise30.trim-idle maps seven runs itself (2, 1, 3, 1, 2, 1 and 1 granules) on device 0
// and trims with live blocks that span the end of the second run and the start of the third, sit inside
// the fourth, and end exactly where the seventh begins; it verifies the bytes returned (five granules),
// seg.runs, that the kept runs' data reads back and that the device's free memory grew by what was
// given back (so this check runs with the GPU to itself). It holds a stream with the gate kernel, opens
// it from another thread one second later or once trim has returned, and verifies that trim returned
// only after the gate had opened. With nothing live it verifies that nothing is left held (the check's
// ledger). Then it uses all four milestones as you wrote them: an Arena replays 300 allocations and
// frees of a fixed rule on two streams, writing a pattern into each block, trims every 50 events,
// and verifies that no live block overlaps another and every live block still holds its pattern.
//
// Learn it in: lesson 30, step 5 ("Giving granules back at the idle point, no pointer moved")
size_t trim(Segment& seg, const std::vector<std::pair<CUdeviceptr, size_t>>& live) {
  wb::notDone();
}

}  // namespace ex30
