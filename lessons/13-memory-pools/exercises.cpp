// Lesson 13's exercises. Replace each body with your solution, then run: cmake --build build --target exercises-13
#include "exercises.hpp"
#include "exercise.hpp"

// The starting bodies use none of their parameters yet (warnings are errors in some builds).
#pragma GCC diagnostic ignored "-Wunused-parameter"

namespace ex13 {

// Exercise 1 of 3 (scratch-per-request): A stream-ordered scratch buffer per request that never blocks the host
//
// Task: A server handles each request in a stream of its own, and each request needs a scratch
// buffer for as long as its work runs. Write serveRequest: take a scratch buffer of bytes from pool
// in stream (cuMemAllocFromPoolAsync); copy input into it and from it into output
// (cuMemcpyDtoDAsync or cuMemcpyAsync); give it back with cuMemFreeAsync in stream, after its last
// use. Every step goes into stream, so the call returns at once, before any of it has run, and the
// host thread can take the next request. Take from the pool you are given, and leave the device's
// current pool as it is (cuDeviceSetMemPool would change it for the whole process), and the calling
// thread's current context too. The caller owns the pool, the stream, input and output; once the
// stream has run, nothing of yours is left allocated. If a copy cannot be enqueued, throw, and
// still give the scratch buffer back in stream.
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
// fails the call) and verifies that serveRequest threw and the pool has the buffer back once the
// stream has run. Nothing here depends on which device: the pool and the stream name it.
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
// createSteadyPool: create a new pool of device memory on dev (not the device's default pool, which
// the whole process shares) whose release threshold is exactly workingSetBytes, so that it holds
// the working set across those synchronisations and tries to give back what a burst took beyond
// it. Bursts must still be served: do not cap the pool's size. Leave the device's current pool as
// it is. Return the pool; the caller destroys it. If a call fails, throw and leave no pool behind.
//
// The check: exercise13.steady-pool verifies that createSteadyPool made one new pool, not the
// default one, and left the device's current pool as it was; that the pool's release threshold is
// the working set (32 MiB); that five steps of the working set (allocate, free, synchronise) leave
// the same RESERVED_MEM_CURRENT after every step, at least the working set; and that a step of
// twice the working set is served. Whether the pool then gives the burst back the reference leaves
// to the driver ("will try to release"), so the check does not require it. It makes
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
// and a consumer stream needs one of the same size. Write handOver: free used in the producer's
// stream order; then, without blocking the host, order the consumer after that free with an event
// (record it in the producer after cuMemFreeAsync, make the consumer wait for it with
// cuStreamWaitEvent), and only then take a block of bytes from pool in the consumer, and return it.
// In that order the pool may give the consumer the very block the producer frees, and the
// consumer's later work cannot run before the producer's is done; an event recorded before the
// free, or an allocation made before the wait, orders nothing after the free. used is the pool's
// once handOver is called. If a call fails, throw, and leave no event behind. Leave the calling
// thread's current context and the device's current pool as they are.
//
// The check: exercise13.event-handover runs in a context it created. With the producer held by a
// gate kernel, it calls handOver and verifies that it returned while the gate was closed; that a
// stamp kernel queued in the consumer after handOver has not run 200 ms later (a kernel that
// waits for nothing runs within microseconds), and runs after the producer's last stamp, queued
// before its free, once the gate opens; that the block came from pool
// (CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE); and that handOver left no event, the device's current pool
// and the context stack as they were. Whether the pool reuses the freed block is the driver's
// choice (the guide says it "can"), so the check does not require it. Then it makes the event's
// record fail, and then the allocation, and verifies each time that handOver threw and left no
// event, that used was already freed when the record failed, and that the consumer already waited
// when the allocation failed.
//
// Learn it in: lesson 13, step 5 ("Reuse across streams follows the stream order")
CUdeviceptr handOver(CUmemoryPool pool, CUdeviceptr used, size_t bytes, CUstream producer, CUstream consumer) {
  wb::notDone();
}

}  // namespace ex13
