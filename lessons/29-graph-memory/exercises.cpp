// Lesson 29's exercises. Replace each body with your solution, then run: cmake --build build --target exercises-29

// The starting bodies use none of their parameters yet (warnings are errors in some builds).
#pragma GCC diagnostic ignored "-Wunused-parameter"

#include "exercises.hpp"
#include "exercise.hpp"

namespace ex29 {

// Exercise 1 of 3 (capture-safe-scratch): Scratch memory that a caller's capture records
//
// Task: A library kernel needs scratch memory for one call. Its caller may run it eagerly, or capture
// it into a graph with a GLOBAL capture, as engines capture their decode steps: an allocator that
// calls cuMemAlloc there breaks the caller's capture (lesson 29, step 3). Write scratchFor and
// releaseScratch so that both work: in a capture the scratch becomes a memory allocation node and a
// memory free node of the caller's graph.
//
//   R1: scratchFor allocates `bytes` in stream order in `stream` (cuMemAllocAsync): in a capture, a
//       memory allocation node of `bytes` whose address is the one returned; outside a capture,
//       memory that the work queued in stream after it may use.
//   R2: releaseScratch frees it in stream order in `stream` (cuMemFreeAsync): in a capture, a memory
//       free node after the work captured before it; outside a capture, after that work.
//   R3: Neither makes a call that breaks a capture (cuMemAlloc, cuMemFree, a synchronisation): a
//       GLOBAL capture of stream is still ACTIVE after both.
//   R4: When a call fails, they throw wb::DriverError.
//
// The check: exercise29.capture-safe-scratch begins a GLOBAL capture of a non-blocking stream, calls
// scratchFor (8 MiB), captures a fill of the scratch and a copy of its end, calls releaseScratch,
// and verifies that the capture is still ACTIVE, that it ends with a graph of one allocation node
// (8 MiB, at the address scratchFor returned), one free node of that address reached from the fill
// node, and that the graph runs correctly twice. Then, outside a capture, it fills scratch from
// scratchFor, copies it out, releases it, and verifies the values and that no device memory is left
// held once the stream is waited for. Last, it makes cuMemAllocAsync, then cuMemFreeAsync, fail and
// verifies that scratchFor and releaseScratch throw wb::DriverError.
//
// Learn it in: lesson 29, step 1 ("A capture that allocates: memory nodes") and step 3 ("A plain cuMemAlloc in a capture, by capture mode")
CUdeviceptr scratchFor(CUstream stream, size_t bytes) {
  wb::notDone();
}

void releaseScratch(CUstream stream, CUdeviceptr scratch) {
  wb::notDone();
}

// Exercise 2 of 3 (append-capture): Capture into the graph an engine already holds
//
// Task: An engine builds its step graph by hand (nodes whose handles it keeps, to update them), and a
// library it calls offers only a stream API. Append what the library enqueues to the engine's graph
// by capturing it there (cuStreamBeginCaptureToGraph, CUDA 12.3), after the nodes the engine names.
// Write appendCaptured.
//
//   R1: It captures everything work(stream) enqueues into graph, the first captured node depending
//       on every node of `after` (none: it is a root), with default edges.
//   R2: It ends the capture, leaving stream not capturing. The captured work lands in graph itself,
//       as its own nodes (not inside a child graph node), and graph stays the caller's: it destroys
//       nothing.
//   R3: When work throws, it ends the capture all the same and lets the same exception through.
//   R4: When the capture was invalidated (cuStreamEndCapture fails), it throws wb::DriverError.
//
// The check: exercise29.append-capture builds a graph of one fill node, appends a captured scale
// after it, and verifies the two nodes (the second a kernel node), the one edge from the fill node,
// and that the graph runs
// (fill 2, then times 3 plus 1: 7). Then a graph of two fill nodes, both in `after`: the captured
// node must depend on both. Then an empty `after`: the captured node is a root. Then work that
// throws std::runtime_error: that exception comes through and the stream is not capturing. Last,
// work that waits for the capturing stream (which invalidates the capture): appendCaptured must
// throw wb::DriverError, and the stream must not be capturing afterwards. It needs CUDA 12.3, and
// says skipped elsewhere.
//
// Learn it in: lesson 29, step 5 ("Capturing into a graph you hold; changing a node in place")
void appendCaptured(CUgraph graph, const std::vector<CUgraphNode>& after, CUstream stream,
                    const std::function<void(CUstream)>& work) {
  wb::notDone();
}

// Exercise 3 of 3 (exec-fill-value): Change one argument of an instantiated graph, not its template
//
// Task: An engine keeps one executable graph per batch size and changes a scalar between launches (a
// scale, a step count) without instantiating again, while the template graph stays as captured (it
// instantiates from it again later). The node is a launch of vector_ops' fill(out, value, n). Write
// setFillValue.
//
//   R1: From the next launch of exec on, node fills with `value`; its output pointer and count, its
//       function, grid and block stay as they were (read them from the template node with
//       cuGraphKernelNodeGetParams).
//   R2: Only the executable graph changes: the template node keeps its value (cuGraphExecNodeSetParams
//       or cuGraphExecKernelNodeSetParams do that; cuGraphNodeSetParams changes the template alone).
//   R3: When a call fails, it throws wb::DriverError.
//
// The check: exercise29.exec-fill-value instantiates a graph of one fill node (value 1) over 100000
// floats, calls setFillValue(exec, node, 4), launches it and verifies that every element is 4 and
// that the template node's value argument is still 1; then sets 9 and verifies 9 everywhere. Last,
// it makes cuGraphKernelNodeGetParams fail and verifies that setFillValue throws wb::DriverError.
//
// Learn it in: lesson 29, step 5 ("Capturing into a graph you hold; changing a node in place"), and lesson 15, step 3
void setFillValue(CUgraphExec exec, CUgraphNode node, float value) {
  wb::notDone();
}

}  // namespace ex29
