// Lesson 03's exercises. Replace each body with your solution, then run: cmake --build build --target exercises-03
#include "exercises.hpp"
#include "exercise.hpp"

// The starting bodies use none of their parameters yet (warnings are errors in some builds).
#pragma GCC diagnostic ignored "-Wunused-parameter"

namespace ex03 {

// Exercise 1 of 3 (context-scope): A scope guard that restores the context stack even when an exception leaves the scope
//
// Task: A library works in its own context but is called from code that has contexts of its own on
// the thread's stack. Write withContext: make ctx current, run work, and put the caller's stack
// back. work keeps its own pushes and pops balanced.
//
//   R1: ctx is the current context while work runs.
//   R2: When work returns, the calling thread's stack is exactly as it was: empty, holding other
//       contexts, or with ctx already on top.
//   R3: When work throws, the exception reaches the caller unchanged (its type and its code), and
//       the calling thread's stack is exactly as it was.
//   R4: If ctx cannot be made current, it throws that refusal (the wb::DriverError of the call that
//       refused) without running work and without taking anything off the caller's stack.
//
// The check: exercise03.context-scope runs withContext on an empty stack, on a stack holding
// another context and on one with ctx already on top, with work that records the current context
// and work that throws (a type of the check's own, and a wb::DriverError), and verifies that ctx
// was current in work, that the exception reached the caller, and that the whole stack afterwards
// (drawn by popping and pushing it back) is what it was before. Then it refuses the call that makes
// ctx current (cuCtxPushCurrent, or cuCtxSetCurrent where your code uses that; the refusal,
// CUDA_ERROR_INVALID_CONTEXT, never reaches the driver) and verifies that the refusal reached the
// caller as wb::DriverError, that work did not run, and that the caller's context is still current.
//
// Learn it in: lesson 03, step 2 ("Push, pop, set")
void withContext(CUcontext ctx, const std::function<void()>& work) {
  wb::notDone();
}

// Exercise 2 of 3 (worker-thread): A worker thread that runs its job in the caller's context
//
// Task: A loader hands uploads to a thread of their own so the caller can go on. Write runInThread:
// start a std::thread that runs job with ctx current in that thread, and wait for it. An exception
// that leaves a std::thread's function ends the process.
//
//   R1: job runs on a new thread, never on the calling one (also where ctx is current there), with
//       ctx current in that thread.
//   R2: runInThread returns only once the job has finished.
//   R3: If the job throws, the exception reaches the caller of runInThread as it was thrown.
//   R4: When ctx cannot be made current in the worker, that refusal (wb::DriverError) reaches the
//       caller, and the job does not run.
//   R5: The calling thread's own stack is not touched.
//
// The check: exercise03.worker-thread verifies, with another context current in the calling thread,
// that the job ran on a different thread, saw ctx as its current context, could allocate device
// memory there, and had finished when runInThread returned; that the caller's stack is unchanged;
// that with ctx itself current in the calling thread the job still runs on another thread; and, in
// a child process, that an exception thrown by the job reaches the caller, and that when the
// worker's call that makes ctx current is refused (cuCtxPushCurrent, or cuCtxSetCurrent where your
// code uses that; the refusal never reaches the driver) that wb::DriverError reaches the caller
// and the job did not run. It does not look at the worker's stack after the job: the thread ends
// with it.
//
// Learn it in: lesson 03, step 3 ("Each thread has its own stack")
void runInThread(CUcontext ctx, const std::function<void()>& job) {
  wb::notDone();
}

// Exercise 3 of 3 (private-context): A throw-away context that gives all its device memory back
//
// Task: A health probe runs its kernels in a context of its own, so that nothing it does can touch
// the application's context, and it runs again and again in a long-lived service. Write
// withPrivateContext: create a new context on dev, run work with it current, then give it back.
// work frees its own allocations; what is left is the context itself.
//
//   R1: work runs with a new context current, on dev, whatever device the caller's context is on.
//   R2: The context is given back entirely before withPrivateContext returns (its device memory
//       free again, nothing of it held), whether work returns or throws.
//   R3: An exception from work reaches the caller.
//   R4: The calling thread's stack is as it was, whether work returns or throws.
//   R5: If the context cannot be made, it throws that refusal (wb::DriverError) without running
//       work, and leaves the stack, and what the process holds, as they were.
//
// The check: exercise03.private-context measures free device memory with the application's
// context (the primary one) current, runs withPrivateContext with work that records its context
// and the free memory inside, and then with work that throws; it verifies that work ran in a new
// context on dev, which took device memory, that the exception reached the caller, that the
// caller's stack is as before, and that free device memory is back to exactly its value before and
// the ledger of what the process holds (tests/exercises/ledger.hpp) shows no context more. With a
// second GPU it does the same on device 1 while device 0's context is current (with one GPU it
// reports that part skipped). Then it refuses cuCtxCreate (CUDA_ERROR_OUT_OF_MEMORY, without
// reaching the driver) and verifies that the refusal reached the caller as wb::DriverError, that
// work did not run, and that the stack and the ledger are as before.
//
// Learn it in: lesson 03, step 4 ("Popping frees nothing")
void withPrivateContext(CUdevice dev, const std::function<void()>& work) {
  wb::notDone();
}

}  // namespace ex03
