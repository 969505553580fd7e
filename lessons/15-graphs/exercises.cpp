// Lesson 15's exercises. Replace each body with your solution, then run: cmake --build build --target exercises-15

// The starting bodies use none of their parameters and members yet (warnings are errors in some
// builds; Clang's warning about a private member must be silenced before the class is declared).
#pragma GCC diagnostic ignored "-Wunused-parameter"
#ifdef __clang__
#pragma clang diagnostic ignored "-Wunused-private-field"
#endif

#include "exercises.hpp"
#include "exercise.hpp"

namespace ex15 {

// Exercise 1 of 3 (token-step): A decode step captured once and replayed with each token's argument
//
// Task: An inference engine runs the same kernels for every token it generates; only an argument or
// two change. Capturing and instantiating per token costs more than the kernels save. Write
// TokenStep, which captures the step once and replays it with each token's argument.
//
//   R1: The constructor captures, in stream, the step over the n floats at data: axpb(data, n, 2, 0)
//       (x = 2 * x), then axpb(data, n, 1, 0) (x = x + token, captured with token 0), each with
//       kBlocks blocks of kThreads threads; it keeps the node of the second kernel and instantiates
//       the graph once, with cuGraphInstantiate.
//   R2: run(token) gives the second kernel b = token for this launch and the ones after it: each
//       launch adds its own token.
//   R3: run() launches the graph in stream, behind the work already there, without waiting for
//       anything.
//   R4: run() never instantiates; exec() returns the executable graph, which never changes.
//   R5: The destructor destroys the executable graph and the graph.
//   R6: If a call in the constructor fails (a launch refused during the capture, an instantiation
//       that fails), the constructor throws (CU_CHECK's wb::DriverError), leaves the stream out of
//       capture mode, and holds nothing: no graph, no executable graph.
//
// The check: exercise15.token-step starts from zeros and, with a gate kernel holding the stream,
// calls run() for the tokens 1 to 5 back to back. It verifies that every run() returned while the
// gate was still closed, that no step had run by then (it synchronises the legacy stream first: a
// graph launched there would have), that run() made no instantiation, that exec() was the same
// handle from construction on, and, once the gate opened and the stream ran, that every element is
// 57: each launch doubled what the one before left and added its own token (1, 4, 11, 26, 57). A
// launch that added another token, or none, gives another value. After the destructor, the process
// holds what it held before. Then it makes the capture's first launch fail, then its second, and
// the instantiation fail (the check fails the call itself, cuLaunchKernel or cuLaunchKernelEx, and
// cuGraphInstantiate or cuGraphInstantiateWithParams, without reaching the driver), and verifies
// each time that the constructor threw, that the stream is not capturing, and that nothing is held.
// It does not catch a graph launched in a stream of your own instead of stream, nor a launch shape
// other than kBlocks by kThreads (axpb loops over the grid, so the values do not show it).
//
// Learn it in: lesson 15, step 3 ("New arguments for the next launch"), and step 1 ("Capture, instantiate, launch")
TokenStep::TokenStep(CUfunction axpb, CUdeviceptr data, unsigned n, CUstream stream) {
  wb::notDone();
}

TokenStep::~TokenStep() {}

void TokenStep::run(float token) {
  wb::notDone();
}

CUgraphExec TokenStep::exec() const {
  wb::notDone();
}

// Exercise 2 of 3 (exec-cache): Update the executable graph when the driver allows it, instantiate anew when it refuses
//
// Task: An engine captures its step again whenever something may have changed (a new batch size, a
// new buffer), as llama.cpp does between tokens. Instantiating a graph is expensive; updating an
// executable graph in place is cheap, but only possible when the new graph has the same topology
// and node types. Write ExecCache::apply, which keeps one executable graph in step with the graphs
// it is given, and returns it.
//
//   R1: The executable graph apply() returns runs the graph last given to it.
//   R2: A later graph is applied with cuGraphExecUpdate where the driver allows it: the same
//       executable graph, updated in place, and no instantiation.
//   R3: The first graph is instantiated (cuGraphInstantiate); when the driver refuses an update
//       (CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE; CUgraphExecUpdateResultInfo says why), apply()
//       destroys the executable graph and instantiates the new graph instead.
//   R4: Any other error of the update throws wb::DriverError (e.g. through CU_CHECK) and keeps the
//       executable graph as it was, so that the next apply() can still update it.
//   R5: instantiations() is the number of instantiations apply() made.
//   R6: The cache holds one executable graph at a time and never destroys a graph it is given (the
//       caller keeps ownership of those); the destructor destroys what is left.
//
// The check: exercise15.exec-cache captures six graphs over the same buffer: x = 1; x = 2; x = 3
// then x += 4 (one kernel more); x = 5 then x += 6; a memset to 0 then x += 7 (the first node
// became a memset); and a memset to 0 then x += 8. After each of the first five apply() calls it
// launches what apply() returned and verifies the value (1, 2, 7, 11, 7): the executable graph
// always runs the graph last given. It verifies that the same-topology graphs were applied in place
// (the same handle as before), that three instantiations were counted and three cuGraphInstantiate
// calls made, that the process holds exactly one executable graph and every graph the check made.
// Then it makes cuGraphExecUpdate fail with CUDA_ERROR_OUT_OF_MEMORY for the sixth graph, and then
// with CUDA_ERROR_INVALID_VALUE (the check fails the call itself): apply() must throw
// wb::DriverError each time and keep its executable graph; applied again, the sixth graph updates
// that same executable graph in place, with no instantiation, and runs (8). After the destructor, no executable graph is held.
//
// Learn it in: lesson 15, step 4 ("Updating from a new capture")
ExecCache::~ExecCache() {}

CUgraphExec ExecCache::apply(CUgraph graph) {
  wb::notDone();
}

unsigned ExecCache::instantiations() const {
  wb::notDone();
}

// Exercise 3 of 3 (capture-guard): A capture that is always ended, and a stream that stays usable
//
// Task: Code run under stream capture can fail: a library call throws, or a synchronising call
// invalidates the capture and the next checked call throws. If nothing ends the capture, the stream
// stays in capture mode, invalidated or not, and every later use of it fails. Write CaptureGuard,
// which ends a capture on every path.
//
//   R1: The constructor begins a capture of the stream in the mode given.
//   R2: end() ends the capture and returns the graph of what was captured, which is then the
//       caller's.
//   R3: end() throws wb::DriverError if the capture failed, and the stream is out of capture mode.
//   R4: Either way the guard is done with the stream after end(): its destructor leaves alone a
//       capture the caller begins on the stream since.
//   R5: The destructor, if end() was not called, ends the capture whatever state it is in, destroys
//       the graph it got, if any, and never throws.
//
// The check: exercise15.capture-guard captures a stamp kernel with a guard and verifies that end()
// returns a graph of one node, which the guard's destructor leaves to the caller, and which runs it; then lets the captured code throw, once after a
// plain launch and once after a synchronising call that invalidated the capture, and verifies each
// time that the stream is out of capture mode and runs a stamp again, and that the process holds
// no graph more than before; and verifies that end() of an invalidated capture throws
// wb::DriverError and leaves the stream out of capture mode. It begins a capture of its own on the
// stream after end() returned, and after end() threw, and verifies that the guard's destructor left
// it active. Last, under a guard begun in CU_STREAM_CAPTURE_MODE_RELAXED it allocates with cuMemAlloc
// in the capturing thread, which the reference allows in that mode, and verifies that the
// allocation succeeded and the capture stayed active (on driver 580 a GLOBAL capture refused it).
//
// Learn it in: lesson 15, step 2 ("What a capture forbids")
CaptureGuard::CaptureGuard(CUstream stream, CUstreamCaptureMode mode) {
  wb::notDone();
}

CaptureGuard::~CaptureGuard() {}

CUgraph CaptureGuard::end() {
  wb::notDone();
}

}  // namespace ex15
