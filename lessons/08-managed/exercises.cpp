// Lesson 08's exercises. Replace each body with your solution, then run: cmake --build build --target exercises-08

// The starting bodies use none of their parameters yet (warnings are errors in some builds).
#pragma GCC diagnostic ignored "-Wunused-parameter"

#include "exercises.hpp"
#include "exercise.hpp"

namespace ex08 {

// Exercise 1 of 2 (count-everywhere): A counter accumulated on every device through one managed variable
//
// Task: A job runs its work in several contexts, on every device and in contexts the application
// created itself, and wants one total at the end without copying a counter back from each. Write
// countEverywhere, which counts with the library's kernel count (it adds 1 per thread to both
// counters) into its __managed__ variable managedCounter. cuLaunchKernel refuses a grid of 0 blocks.
//
//   R1: It sets managedCounter to 0, launches count with threads[i] threads in contexts[i] for every
//       i, and returns the total managedCounter holds once every launch is done.
//   R2: A count is any number, not a whole number of blocks, and a count of 0 launches nothing.
//   R3: It reads the total through the one pointer cuLibraryGetManaged gives, as the host reads any
//       memory, and only when no kernel can still be adding to it.
//   R4 (not checked: an overlap leaves no trace that every run shows): kernels on two devices never
//       add to the variable at the same time (count's atomicAdd is atomic among the threads of one
//       device only).
//   R5: The calling thread's context stack is as it was when it returns, also when a driver call
//       fails.
//   R6: A driver call that fails is thrown, as CU_CHECK throws it: a launch, and the wait for one.
//
// The check: exercise08.count-everywhere passes every device's primary context and a context
// created on device 0, with a stack of two contexts of its own, and calls countEverywhere twice with
// thread counts that are not multiples of 256, one of them 0. It verifies that each call returned
// the sum of its counts, that managedCounter holds the second sum, that each context's own
// deviceCounter counted exactly the threads launched in it, and that the caller's stack was as
// before each call. It calls it again while a gate kernel holds the NULL stream of device 0's
// primary context until the call first waits for the GPU, and verifies the total; and once with the
// second launch made to fail, and once with the first cuCtxSynchronize made to fail (where the call
// waits with it), and verifies that each error was thrown and the stack restored. It does not see
// whether launches on two devices overlapped (the counts almost always come out right, and the order
// of the calls does not show it where the GPU orders the launches, after an event), nor a wait
// skipped for work the call put in streams of its own.
//
// Learn it in: lesson 08, step 3 ("Counting, and why the host waits")
unsigned long long countEverywhere(CUlibrary counters, const std::vector<CUcontext>& contexts,
                                   const std::vector<unsigned>& threads) {
  wb::notDone();
}

// Exercise 2 of 2 (reset-per-context): A per-context counter reset in every context, not once per device
//
// Task: The library's __device__ variable deviceCounter is a per-context statistic: each context
// that uses the library has its own copy, even two contexts on one device. Between two runs of a
// job the statistic must start from 0 everywhere, while managedCounter is the process-wide total.
// Write resetPerContext.
//
//   R1: It sets all 8 bytes of deviceCounter to 0 in every one of contexts: each context's own
//       copy, two contexts on one device included.
//   R2: managedCounter keeps its value.
//   R3: It finds each copy with cuLibraryGetGlobal while that copy's own context is current.
//   R4: The calling thread's context stack is as it was when it returns, also when a driver call
//       fails.
//   R5: A driver call that fails is thrown, as CU_CHECK throws it: a lookup, and a write.
//
// The check: exercise08.reset-per-context launches count in every device's primary context and in
// two contexts created on device 0, stores in each context's deviceCounter a value with bits set in
// both of its 32-bit halves, and calls resetPerContext with all of them, with a stack of two contexts
// of its own. It verifies that deviceCounter then reads 0 in each one, that managedCounter kept its
// total, and that the caller's stack was as it was. Then it makes the second cuLibraryGetGlobal
// fail, and then the first write (cuMemsetD8, D16 or D32, or cuMemcpyHtoD, whichever the call
// uses), and verifies each time that the error was thrown and the stack restored.
//
// Learn it in: lesson 08, step 4 ("One copy per context")
void resetPerContext(CUlibrary counters, const std::vector<CUcontext>& contexts) {
  wb::notDone();
}

}  // namespace ex08
