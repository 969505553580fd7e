// Lesson 03's exercises. Replace each body with your solution, then run ctest -R exercise03.
#include "exercises.hpp"
#include "exercise.hpp"

// The starting bodies use none of their parameters yet (warnings are errors in some builds).
#pragma GCC diagnostic ignored "-Wunused-parameter"

namespace ex03 {

// Exercise 1 of 3 (context-scope): A scope guard that restores the context stack even when an exception leaves the scope
//
// Task: A library works in its own context but is called from code that has contexts of its own on
// the thread's stack. Write withContext: make ctx current, run work, and leave the calling thread's
// stack exactly as it was, whether work returns or throws; an exception from work must reach the
// caller unchanged. work keeps its own pushes and pops balanced.
//
// The check: exercise03.context-scope runs withContext on an empty stack and on a stack holding
// another context, with work that records the current context and work that throws, and verifies
// that ctx was current in work, that the exception reached the caller, and that the whole stack
// afterwards (drawn by popping and pushing it back) is what it was before.
//
// Learn it in: lesson 03, step 2 ("Push, pop, set")
void withContext(CUcontext ctx, const std::function<void()>& work) {
  wb::notDone();
}

// Exercise 2 of 3 (worker-thread): A worker thread that runs its job in the caller's context
//
// Task: A loader hands uploads to a thread of their own so the caller can go on. Write runInThread:
// start a std::thread that runs job with ctx current in that thread, wait for it, and leave the
// worker's stack empty when the job is done. If the job throws, the exception must reach the caller
// of runInThread (an exception that leaves a std::thread's function ends the process). The calling
// thread's own stack is not touched.
//
// The check: exercise03.worker-thread verifies, with another context current in the calling thread,
// that the job ran on a different thread, saw ctx as its current context, and could allocate device
// memory there; that the caller's current context is unchanged; and, in a child process, that an
// exception thrown by the job reaches the caller.
//
// Learn it in: lesson 03, step 3 ("Each thread has its own stack")
void runInThread(CUcontext ctx, const std::function<void()>& job) {
  wb::notDone();
}

// Exercise 3 of 3 (private-context): A throw-away context that gives all its device memory back
//
// Task: A health probe runs its kernels in a context of its own, so that nothing it does can touch
// the application's context, and it runs again and again in a long-lived service. Write
// withPrivateContext: create a new context on dev, run work with it current, then give it back
// entirely before you return, whether work returns or throws (the exception reaches the caller),
// and leave the calling thread's stack as it was. work frees its own allocations; what is left is
// the context itself.
//
// The check: exercise03.private-context measures free device memory with the application's
// context (the primary one) current, runs withPrivateContext with work that records its context
// and the free memory inside, and then with work that throws; it verifies that work ran in a new
// context on dev, which took device memory, that the exception reached the caller, that the
// caller's stack is as before, and that free device memory is back to exactly its value before.
//
// Learn it in: lesson 03, step 4 ("Popping frees nothing")
void withPrivateContext(CUdevice dev, const std::function<void()>& work) {
  wb::notDone();
}

}  // namespace ex03
