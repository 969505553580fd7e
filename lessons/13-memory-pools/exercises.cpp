// Lesson 13's exercises. Replace each body with your solution, then run: cmake --build build --target exercises-13
#include "exercises.hpp"
#include "exercise.hpp"

// The starting bodies use none of their parameters yet (warnings are errors in some builds).
#pragma GCC diagnostic ignored "-Wunused-parameter"

namespace ex13 {

// Exercise 1 of 3 (scratch-per-request): A stream-ordered scratch buffer per request that never blocks the host
//
// Task: A server handles each request in a stream of its own, and each request needs a scratch
// buffer for as long as its work runs. Write serveRequest, which takes a scratch buffer of bytes
// from pool, copies input into it and from it into output (cuMemcpyDtoDAsync or cuMemcpyAsync),
// and gives it back, every step enqueued into stream so that the host thread can take the next
// request. The caller owns the pool, the stream, input and output.
//
//   R1: The scratch buffer comes from the pool given, in stream (cuMemAllocFromPoolAsync), and not
//       from the device's current pool.
//   R2: Once the stream has run, output holds the bytes of input, copied through the scratch
//       buffer.
//   R3: The scratch buffer goes back with cuMemFreeAsync in stream, after its last use (not
//       cuMemFree): once the stream has run, nothing of serveRequest's is left allocated.
//   R4: Every step only goes into stream: serveRequest returns at once, before any of it has run.
//   R5: The device's current pool is as it was (cuDeviceSetMemPool would change it for the whole
//       process).
//   R6: The calling thread's current context is as it was, also when serveRequest throws.
//   R7: If a copy cannot be enqueued, serveRequest throws, and still gives the scratch buffer back
//       in stream.
//
// The check: exercise13.scratch-per-request runs in a context it created, not a primary context.
// With a gate kernel holding the stream, it calls serveRequest on 4 MiB and 3 bytes and verifies
// that it returned while the gate was still closed; that once the stream ran, output holds input;
// that the pool counted the scratch buffer (USED_MEM_HIGH at least bytes) and has it back
// (USED_MEM_CURRENT 0); that the device's current pool is unchanged and cuDeviceSetMemPool and
// cuMemFree were not called; and that nothing is left held and the context stack is as it was.
// Then it captures serveRequest into a graph (stream capture, lesson 15 shows it) and verifies
// that the graph holds one allocation and its free, with every copy after the allocation and
// before the free. Last, it makes the first and then the second copy fail (the check's ledger
// fails the call) and verifies that serveRequest threw, that the pool has the buffer back once the
// stream has run and that the context stack is as it was. Nothing here depends on which device:
// the pool and the stream name it.
//
// Learn it in: lesson 13, step 2 ("Allocating and freeing in stream order")
void serveRequest(CUmemoryPool pool, CUstream stream, CUdeviceptr input, CUdeviceptr output, size_t bytes) {
  wb::notDone();
}

// Exercise 2 of 3 (steady-pool): A pool whose reserved memory stays flat across iterations
//
// Task: A service runs the same step again and again: allocate its working set, free it,
// synchronise. Under the default release threshold (0) each synchronisation tries to give the memory
// back ("will try to", the reference says) and the next step maps it again: slow, and the footprint
// jumps; under UINT64_MAX the pool keeps every burst for good, memory other GPU processes need. Write
// createSteadyPool, which makes a pool that holds the working set across those synchronisations and
// tries to give back what a burst took beyond it.
//
//   R1: It creates and returns a new pool of device memory on dev, whichever context is current:
//       not the device's default pool, which the whole process shares. It holds nothing else; the
//       caller destroys the pool.
//   R2: The pool's release threshold is exactly workingSetBytes.
//   R3: Bursts are still served: the pool's size is not capped.
//   R4: The device's current pool is as it was.
//   R5: If a call fails, it throws and leaves no pool behind.
//
// The check: exercise13.steady-pool verifies that createSteadyPool made one new pool, not the
// default one, and left the device's current pool as it was; that the pool's release threshold is
// the working set (32 MiB); that five steps of the working set (allocate, free, synchronise) leave
// the same RESERVED_MEM_CURRENT after every step, at least the working set; and that a step of
// twice the working set is served. It also asks for a pool of 5 GiB + 4 KiB, a working set past
// 32 bits, and verifies its threshold. Whether the pool gives a burst back the reference leaves to
// the driver ("will try to release"), so the check does not require it. It makes
// cuMemPoolSetAttribute fail and verifies that createSteadyPool threw and left no pool. With two
// devices it also makes a pool for device 1 while device 0's context is current, and verifies that
// its threshold is set and its memory is on device 1; with one, the exercise reports itself
// skipped.
//
// Learn it in: lesson 13, step 4 ("The release threshold")
CUmemoryPool createSteadyPool(CUdevice dev, size_t workingSetBytes) {
  wb::notDone();
}

// Exercise 3 of 3 (event-handover): Safe cross-stream reuse ordered by an event
//
// Task: A producer stream is done with a buffer from pool (its last work on it may still be queued)
// and a consumer stream needs one of the same size. Write handOver, which frees used in the
// producer's stream order, orders the consumer after that free with an event, without blocking
// the host, and only then takes a block from pool in the consumer and returns it. In that order
// the pool may give the consumer the very block the producer frees, and the consumer's later work
// cannot run before the producer's is done. used is the pool's once handOver is called.
//
//   R1: It frees used with cuMemFreeAsync in producer, and records an event in producer after that
//       free (an event recorded before the free orders nothing after it).
//   R2: The consumer waits for that event (cuStreamWaitEvent): its later work cannot run before
//       the producer's is done.
//   R3: Only after that wait does it take a block of bytes from pool (not from the device's current
//       pool) in consumer (an allocation made before the wait is not ordered after the free), and
//       it returns that block.
//   R4: It does not block the host: it returns before the producer's work has run.
//   R5: It leaves no event behind, whether it returns or throws.
//   R6: If a call fails, it throws.
//   R7: The calling thread's current context and the device's current pool are as they were, also
//       when it throws.
//
// The check: exercise13.event-handover runs in a context it created. With the producer held by a
// gate kernel, it calls handOver and verifies that it returned while the gate was closed; that a
// stamp kernel queued in the consumer after handOver has not run 200 ms later (a kernel that
// waits for nothing runs within microseconds), and runs after the producer's last stamp, queued
// before its free, once the gate opens; that the block came from pool
// (CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE); and that handOver left no event, the device's current pool
// and the context stack as they were. Whether the pool reuses the freed block is the driver's
// choice (the guide says it "can"), so the check does not require it. Then it makes the event's
// record fail, then the consumer's wait, then the allocation, and verifies each time that handOver
// threw, left no event and left the context stack as it was, that used was already freed when the
// record failed, and that the consumer already waited when the allocation failed.
//
// Learn it in: lesson 13, step 5 ("Reuse across streams follows the stream order")
CUdeviceptr handOver(CUmemoryPool pool, CUdeviceptr used, size_t bytes, CUstream producer, CUstream consumer) {
  wb::notDone();
}

}  // namespace ex13
