// Lesson 13's exercises. Replace each body with your solution, then run ctest -R exercise13.
#include "exercises.hpp"
#include "exercise.hpp"

// The starting bodies use none of their parameters yet (warnings are errors in some builds).
#pragma GCC diagnostic ignored "-Wunused-parameter"

namespace ex13 {

// Exercise 1 of 3 (scratch-per-request): A stream-ordered scratch buffer per request that never blocks the host
//
// Task: A server handles each request in a stream of its own, and each request needs a scratch
// buffer for as long as its work runs. Write serveRequest: take a scratch buffer of bytes from pool,
// in stream; copy input into it and from it into output; give it back to the pool. All of it in
// stream order, so the call returns at once, before any of it has run, and the host thread can take
// the next request. The caller owns the pool, the stream, input and output; once the stream has run,
// nothing of yours is left allocated.
//
// The check: with a gate kernel holding the stream, exercise13.scratch-per-request calls
// serveRequest and verifies that it returned while the gate was still closed; that once the stream
// ran, output holds input; and that the pool counted the scratch buffer (USED_MEM_HIGH at least
// bytes) and has it back (USED_MEM_CURRENT 0).
//
// Learn it in: lesson 13, step 2 ("Allocating and freeing in stream order")
void serveRequest(CUmemoryPool pool, CUstream stream, CUdeviceptr input, CUdeviceptr output, size_t bytes) {
  wb::notDone();
}

// Exercise 2 of 3 (steady-pool): A pool whose reserved memory stays flat across iterations
//
// Task: A service runs the same step again and again: allocate its working set, free it,
// synchronise. Under the default release threshold each synchronisation gives the memory back to
// the device and the next step maps it again, which is slow and makes the footprint jump. Write
// createSteadyPool: create a new pool of device memory on dev that keeps workingSetBytes reserved
// across those synchronisations, yet gives back what a burst took beyond it, so the service does not
// hold memory other processes on the GPU need. Return the pool; the caller destroys it.
//
// The check: exercise13.steady-pool runs five steps of workingSetBytes each (allocate, free,
// synchronise) and verifies that RESERVED_MEM_CURRENT is the same after every step and at least the
// working set; then one step of twice the working set, after which the pool must reserve no more
// than the working set. The pool must be a new one, not the device's default pool.
//
// Learn it in: lesson 13, step 4 ("The release threshold")
CUmemoryPool createSteadyPool(CUdevice dev, size_t workingSetBytes) {
  wb::notDone();
}

// Exercise 3 of 3 (event-handover): Safe cross-stream reuse ordered by an event
//
// Task: A producer stream is done with a buffer from pool (its last work on it may still be queued)
// and a consumer stream needs one of the same size. Write handOver: free used in the producer's
// stream order and return a block of bytes from pool for the consumer, such that the pool may give
// the consumer the very block the producer frees, and the consumer's later work cannot run before
// the producer's work is done. Do not block the host.
//
// The check: with the producer held by a gate kernel, exercise13.event-handover calls handOver and
// verifies that it returned while the gate was closed; that the block returned is the one freed and
// the pool did not grow; and that a stamp kernel queued in the consumer after handOver stays pending
// while the gate is closed and runs after the producer's last stamp, queued before its free.
//
// Learn it in: lesson 13, step 5 ("Reuse across streams follows the stream order")
CUdeviceptr handOver(CUmemoryPool pool, CUdeviceptr used, size_t bytes, CUstream producer, CUstream consumer) {
  wb::notDone();
}

}  // namespace ex13
