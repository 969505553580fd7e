// Lesson 11's exercises. Replace each body with your solution, then run ctest -R exercise11.
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
// scaleInStream: enqueue the kernel scale (vector_ops, loaded by the caller with
// cuLibraryLoadFromFile; its parameters are float* data, float factor, float offset, unsigned n)
// over the n floats at data in stream, after what the framework queued there before your call and
// before what it queues after. Only enqueue: the framework synchronises when it needs the result.
// Do the work in the context the stream belongs to, whatever the thread has current, and leave the
// thread's current context exactly as you found it, also when a call fails: the framework's next
// cudaMalloc in that thread goes to whatever context is current there.
//
// The check: exercise11.framework-stream calls scaleInStream once to warm up (times one, plus
// nothing); then it holds a non-blocking runtime stream with a gate kernel, queues the framework's
// add_one on zeros, calls scaleInStream with factor 2 and offset 3, and queues add_one again. It
// verifies that the call returned while the gate was still closed, that every element then is 6
// (add one, times two plus three, add one), and that the primary context is still current. Then it
// calls scaleInStream on ones from a new thread, and verifies that the thread has no current context
// afterwards either; from a thread where another library's context is current, and verifies that it
// still is; and with a stream and memory the framework made while a context of its own was current,
// called from a thread where the primary context is current. Each time every element must be 5.
//
// Learn it in: lesson 11, step 4 ("A new thread"), and step 6 ("Libraries push and pop")
void scaleInStream(CUkernel scale, float* data, unsigned n, float factor, float offset, cudaStream_t stream) {
  wb::notDone();
}

// Exercise 2 of 2 (kernel-through-driver): The framework's kernel launched with cuLaunchKernel, in any context
//
// Task: A framework compiles its kernels into the program with nvcc and launches them the
// runtime's way. Your driver-side code must launch one of them itself (to give it launch
// attributes, to record it into a graph of its own, to launch it where the framework does not), in
// whatever context the caller's stream belongs to: the primary context, which the runtime uses, or
// a context the application created and made current, which the runtime then uses too. Write
// addOneThroughDriver: enqueue the framework's kernel add_one (its entry address is addOneEntry();
// its parameters are float* data, unsigned n) over the n floats at data in stream with
// cuLaunchKernel, in blocks of 256 threads, and return before it has run. Take the kernel's handle
// from the runtime: nvcc gave add_one a C++ name, and the driver cannot look it up by a name you
// can write.
//
// The check: exercise11.kernel-through-driver calls addOneThroughDriver once to warm up; then it
// holds the stream with a gate kernel, queues the framework's cudaMemsetAsync to zero, and calls it
// for all 1000 elements and again for the first 100; it verifies that the calls returned while the
// gate was still closed, and that the first 100 elements are then 2 and the others 1. Then it calls
// it with memory and a stream of the primary context, and afterwards with memory and a stream the
// runtime made in a context the check created and made current, and verifies each result.
//
// Learn it in: lesson 11, step 5 ("Kernels both ways"), and step 2 ("A context the driver made current")
void addOneThroughDriver(float* data, unsigned n, cudaStream_t stream) {
  wb::notDone();
}

}  // namespace ex11
