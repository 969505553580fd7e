// Lesson 11's exercises. Replace each body with your solution, then run: cmake --build build --target exercises-11
// The CUDA runtime is linked here, as in the lesson: your solutions may call it.
#include "exercises.hpp"
#include "exercise.hpp"

// The starting bodies use none of their parameters yet (warnings are errors in some builds).
#pragma GCC diagnostic ignored "-Wunused-parameter"

namespace ex11 {

// Exercise 1 of 2 (framework-stream): Driver work in a runtime framework's stream, from any thread
//
// Task: Your library is written on the Driver API and called by a framework written on the
// runtime. The framework hands you a tensor it allocated with cudaMalloc and the stream its work is
// queued in (a stream it created with the runtime, never the default stream), and it calls you from
// its main thread, from worker threads that have made no CUDA call yet (no context is current
// there), and from threads where another library left a context of its own current. Write
// scaleInStream, which enqueues the kernel scale (vector_ops, loaded by the caller with
// cuLibraryLoadFromFile; its parameters are float* data, float factor, float offset, unsigned n).
// The framework synchronises when it needs the result, and its next cudaMalloc in that thread goes
// to whatever context is current there.
//
//   R1: It launches scale with cuLaunchKernel over the n floats at data and no more, in stream, in
//       blocks of 256 threads, after what the framework queued there before the call and before
//       what it queues after; n need not be a multiple of 256, and may be fewer than a block.
//   R2: n may be 0 (an empty tensor): then it enqueues nothing and returns.
//   R3: It only enqueues: it returns before the kernel has run.
//   R4: The work runs in the context the stream belongs to, whatever the thread has current
//       (cuLaunchKernel's reference: a CUkernel launched into a stream runs in that stream's
//       context).
//   R5: It leaves the thread's context stack exactly as it found it, also when a call fails.
//   R6: It holds nothing afterwards that it did not hold before (no retained primary context), also
//       when a call fails.
//   R7: A failure is thrown as wb::DriverError (CU_CHECK does).
//
// The check: exercise11.framework-stream calls scaleInStream once to warm up (times one, plus
// nothing); then it holds a non-blocking runtime stream with a gate kernel, queues the framework's
// add_one on ones, calls scaleInStream with factor 2 and offset 3 over n = 100000 elements (not a
// multiple of 256), and queues add_one again. It verifies that the call returned while the gate was
// still closed, that every element then is 8 ((1 + 1) * 2 + 3, + 1; a kernel put in another stream
// would have run before the gate opened) and the 256 floats after the n are untouched, and that the
// primary context is still current. Then it calls scaleInStream on twos from a new thread, and
// verifies that the thread has no current context afterwards either; from a thread where another
// library's context is current, and verifies that it still is, and alone on that thread's stack;
// and with a stream and memory the framework made while a context of its own was current, called
// from a thread where the primary context is current. Each time every element must be 7, and the
// process must hold what it held before (the check counts contexts, primary-context retains,
// streams, events and allocations). Last, it makes one cuLaunchKernel fail (the check stands between
// your code and the driver) and verifies that scaleInStream threw wb::DriverError with that code and
// left the calling thread's context stack as it was; that with n = 0 it returns, changing nothing;
// and that a tensor of 100 floats, fewer than a block, is scaled.
//
// Learn it in: lesson 11, step 4 ("A new thread"), and step 6 ("Libraries push and pop"), and lesson 07, step 3 ("One CUkernel, every context")
void scaleInStream(CUkernel scale, float* data, unsigned n, float factor, float offset, cudaStream_t stream) {
  wb::notDone();
}

// Exercise 2 of 2 (kernel-through-driver): The framework's kernel launched with cuLaunchKernel, in any context
//
// Task: A framework compiles its kernels into the program with nvcc and launches them the
// runtime's way. Your driver-side code must launch one of them itself (to give it launch
// attributes, to record it into a graph of its own, to launch it where the framework does not).
// Write addOneThroughDriver, which enqueues the framework's kernel add_one (its entry address is
// addOneEntry(); its parameters are float* data, unsigned n). Take the kernel's handle from the
// runtime: nvcc gave add_one a C++ name, and the driver cannot look it up by a name you can write.
// A handle that belongs to one context (a CUfunction, lessons 06 and 07) is refused in a stream of
// another.
//
//   R1: It launches add_one with cuLaunchKernel over the n floats at data in stream, in the stream's
//       order, in blocks of 256 threads (n need not be a multiple of 256, and may be fewer than a
//       block).
//   R2: It returns before the kernel has run.
//   R3: It works in whatever context the caller's stream belongs to: the primary context, which the
//       runtime uses, or a context the application created, which the runtime uses while it is
//       current; and the calling thread may have the other of the two current.
//   R4: A failure throws: wb::DriverError for a driver call's.
//
// The check: exercise11.kernel-through-driver calls addOneThroughDriver once to warm up; then it
// holds the stream with a gate kernel, queues the framework's cudaMemsetAsync to zero, and calls it
// for all 1000 elements and again for the first 100; it verifies that the calls returned while the
// gate was still closed, and that the first 100 elements are then 2 and the others 1 (a kernel put
// in another stream would have run before the gate opened). Then it calls it with memory and a
// stream of the primary context; with memory and a stream the runtime made in a context the check
// created and made current; and with that context's memory and stream from a thread where the
// primary context is current; and verifies each result. Last, it makes one cuLaunchKernel fail (the
// check stands between your code and the driver) and verifies that addOneThroughDriver threw
// wb::DriverError with that code.
//
// Learn it in: lesson 11, step 5 ("Kernels both ways"), and step 2 ("A context the driver made current")
void addOneThroughDriver(float* data, unsigned n, cudaStream_t stream) {
  wb::notDone();
}

}  // namespace ex11
