// Lesson 28's exercises. Replace each body with your solution, then run: cmake --build build --target exercises-28

// The starting bodies use none of their parameters yet (warnings are errors in some builds).
#pragma GCC diagnostic ignored "-Wunused-parameter"

#include "exercises.hpp"
#include "exercise.hpp"

namespace ex28 {

// Exercise 1 of 3 (serving-streams): A latency stream and a batch stream at the ends of the priority range
//
// Task: A serving engine runs its decode kernels in one stream and its prefill or batch kernels in
// another, and wants the scheduler to prefer the first whenever both have blocks ready. Write
// createServingStreams for the current context.
//
//   R1: latency is a new stream at the greatest priority cuCtxGetStreamPriorityRange reports (the
//       lowest number; a device's range is its own: never a number typed in).
//   R2: batch is a new stream at the least priority it reports.
//   R3: Both are non-blocking (CU_STREAM_NON_BLOCKING): neither waits for the legacy stream.
//   R4: When a call fails, it throws wb::DriverError and holds nothing: a stream made before the
//       failure is destroyed.
//
// The check: exercise28.serving-streams reads each stream's priority with cuStreamGetPriority and its
// flags with cuStreamGetFlags, and compares them with the range it reads itself; it verifies the two
// streams differ and that nothing else is held. Then it makes the first, and then the second,
// cuStreamCreateWithPriority fail with CUDA_ERROR_OUT_OF_MEMORY and verifies that
// createServingStreams throws wb::DriverError with that code and holds no stream afterwards.
//
// Learn it in: lesson 28, step 2 ("Priorities: a stream's, a launch's"), and lesson 09, step 6
ServingStreams createServingStreams() {
  wb::notDone();
}

// Exercise 2 of 3 (persist-window): A hot buffer kept in L2 for a stream's kernels
//
// Task: An inference engine reads the same small buffer (a hot slice of its KV cache, a lookup table)
// in every kernel of a stream, while each kernel also streams far more data through L2. It asks the
// device to keep the hot buffer's lines: a persisting set-aside for the context, and an access policy
// window on the stream. Write persistHot.
//
//   R1: It asks for a set-aside of min(bytes, CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE of the
//       current context's device) with cuCtxSetLimit(CU_LIMIT_PERSISTING_L2_CACHE_SIZE, ...), and
//       returns what cuCtxGetLimit reports afterwards (the driver may clamp or round it).
//   R2: It sets the stream's CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW with cuStreamSetAttribute: base
//       hot, num_bytes min(bytes, CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE), hitProp
//       CU_ACCESS_PROPERTY_PERSISTING, missProp CU_ACCESS_PROPERTY_STREAMING.
//   R3: hitRatio is min(1, the reported set-aside / num_bytes), so that the lines it marks
//       persisting fit in the set-aside.
//   R4: When a call fails, it throws wb::DriverError.
//   R5 (not checked: a hint, whose effect shows only in a rate): the hot buffer's later reads in
//       stream come from L2 more often than without the window.
//
// The check: exercise28.persist-window stands between your code and cuCtxSetLimit to see the value
// asked, reads the limit and the stream's window back, and compares them with what it computes from
// the device's attributes: for an 8 MiB buffer, and for a buffer 2 MiB larger than the largest window.
// Then it makes cuCtxSetLimit, and then cuStreamSetAttribute, fail with CUDA_ERROR_INVALID_VALUE and
// verifies that persistHot throws wb::DriverError each time. It restores the set-aside it found. It
// needs a device with a persisting L2 (compute capability 8.0 and newer), and says skipped elsewhere.
//
// Learn it in: lesson 28, step 4 ("A persisting window: the set-aside, the attribute, the reset"), and step 5
size_t persistHot(CUstream stream, CUdeviceptr hot, size_t bytes) {
  wb::notDone();
}

// Exercise 3 of 3 (start-signal): A kernel launch that signals when its blocks have begun
//
// Task: A communication library's proxy must not start its own kernel before the compute kernel it
// pairs with has all its blocks on the device (else the proxy's blocks could take the SMs the compute
// kernel waits for), but it need not wait for that kernel to end. Write launchSignallingStart, which
// launches the compute kernel so that `started` (created by the caller with CU_EVENT_DISABLE_TIMING)
// fires once its blocks have begun: nominally, for the reference calls it "a best effort" (a waiter
// may start earlier, for example at a higher priority, or only once the kernel has ended).
//
//   R1: It launches f with the arguments args over `blocks` blocks of `threads` threads (one
//       dimension: y and z are 1), no dynamic shared memory, in `stream`.
//   R2: It launches through cuLaunchKernelEx with CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT,
//       event `started`, flags 0 (counted in numAttrs): not an event recorded after the launch, which
//       fires only when the kernel has ended.
//   R3: It returns once the launch is enqueued, without waiting for anything, and holds nothing.
//   R4: When the launch is refused, it throws wb::DriverError with the driver's code.
//
// The check: exercise28.start-signal captures your launch of a probe kernel in one stream, a second
// stream that waits on `started` and launches another, and reads the graph: one edge, from your node's
// CU_GRAPH_KERNEL_NODE_PORT_LAUNCH_ORDER port (the port the launch completion event makes; an event
// recorded after the launch makes a default edge), and your node's grid and block. Behind a gate
// kernel holding the stream, it verifies that your call returned while the gate was closed and that
// nothing is left held. Last, it makes cuLaunchKernelEx fail with CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES
// and verifies that launchSignallingStart throws wb::DriverError with that code. It needs CUDA 12.3
// (the attribute and edge data), and says skipped elsewhere.
//
// Learn it in: lesson 28, step 7 ("A launch completion event"), and lesson 20, step 3
void launchSignallingStart(CUfunction f, unsigned blocks, unsigned threads, void** args, CUstream stream,
                           CUevent started) {
  wb::notDone();
}

}  // namespace ex28
