// Lesson 15's exercises. Replace each body with your solution, then run ctest -R exercise15.

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
// TokenStep: the constructor captures, in stream, the step over the n floats at data: axpb(data, n,
// 2, 0) (x = 2 * x), then axpb(data, n, 1, 0) (x = x + token, captured with token 0), each with
// kBlocks blocks of kThreads threads; it keeps the node of the second kernel and instantiates the
// graph once. run(token) gives the second kernel b = token for this launch and the ones after it,
// and launches the graph in the stream, without waiting for anything. exec() returns the executable
// graph, which never changes. The destructor destroys the executable graph and the graph.
//
// The check: exercise15.token-step starts from zeros and, with a gate kernel holding the stream,
// calls run() for the tokens 1 to 5 back to back. It verifies that every run() returned while the
// gate was still closed, that exec() was the same handle from construction on, and, once the gate
// opened and the stream ran, that every element is 57: each launch doubled what the one before left
// and added its own token (1, 4, 11, 26, 57). A launch that added another token, or none, gives
// another value.
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
// and node types. Write ExecCache::apply: the first graph is instantiated; for each later graph try
// cuGraphExecUpdate, and when the driver refuses the update (CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
// CUgraphExecUpdateResultInfo says why), destroy the executable graph and instantiate the new graph
// instead. Any other error is an error (throw wb::DriverError, e.g. through CU_CHECK). Return the
// executable graph; count the instantiations; the destructor destroys what is left.
//
// The check: exercise15.exec-cache captures five graphs over the same buffer: x = 1; x = 2; x = 3
// then x += 4 (one kernel more); x = 5 then x += 6; and a memset to 0 then x += 7 (the first node
// became a memset). After each apply() it launches what apply() returned and verifies the value
// (1, 2, 7, 11, 7): the executable graph always runs the graph last given. It verifies that the
// same-topology graphs were applied in place (the same handle as before, and no new instantiation)
// and that three instantiations were made in all.
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
// stays in capture mode, invalidated or not, and every later use of it fails. Write CaptureGuard:
// the constructor begins a capture of the stream in the mode given; end() ends it and returns the
// graph, throwing wb::DriverError if the capture failed; the destructor, if end() was not called,
// ends the capture whatever state it is in, destroys the graph it got, if any, and never throws.
//
// The check: exercise15.capture-guard captures a stamp kernel with a guard and verifies that end()
// returns a graph of one node, which runs it; then lets the captured code throw, once after a
// plain launch and once after a synchronising call that invalidated the capture, and verifies each
// time that the stream is out of capture mode and runs a stamp again; and verifies that end() of an
// invalidated capture throws wb::DriverError and leaves the stream out of capture mode.
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
