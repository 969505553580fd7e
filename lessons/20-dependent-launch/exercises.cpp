// Lesson 20's exercises. Replace each body with your solution, then run: cmake --build build --target exercises-20

// The starting bodies use none of their parameters yet (warnings are errors in some builds).
#pragma GCC diagnostic ignored "-Wunused-parameter"

#include "exercises.hpp"
#include "exercise.hpp"

namespace ex20 {

// Exercise 1 of 3 (dependent-launch): Launch a kernel as a programmatic dependent of the one before it
//
// Task: A framework launches each of its kernels as a programmatic dependent of the kernel before it
// in the stream (its kernels all wait with griddepcontrol.wait before they read their inputs), so that
// each launch and preamble overlaps the end of the kernel before. Write launchDependent.
//
//   R1: It launches f with the arguments args over `blocks` blocks of `threads` threads (one
//       dimension: y and z are 1), no dynamic shared memory, in `stream`.
//   R2: It launches through cuLaunchKernelEx with the launch attribute
//       CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION set to 1 (counted in numAttrs).
//   R3: It returns once the launch is enqueued, without waiting for anything, and holds nothing
//       afterwards.
//   R4: When the launch is refused, it throws wb::DriverError with the driver's code (CU_CHECK does).
//
// The check: exercise20.dependent-launch captures a plain launch of a kernel and then your launch of
// kernels/streams.cu's burn over 3 blocks of 64 threads, and verifies that the graph holds both
// kernels, with one edge between them whose edge data is programmatic (type
// CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC, from_port CU_GRAPH_KERNEL_NODE_PORT_PROGRAMMATIC: what the
// attribute makes of a captured launch), that the burn node has 3 x 1 x 1 blocks of 64 x 1 x 1
// threads and no dynamic shared memory, and that, run, it changed exactly the elements its arguments
// name. Then, with a gate kernel holding the check's stream, it verifies that launchDependent
// returned while the gate was still closed, that the kernel had not run then (it synchronises the
// legacy stream first: a launch there would have run), that it ran once the gate opened, and that
// nothing is left held. Last, it verifies that a launch of 2048 threads per block (more than any
// device allows) throws wb::DriverError, and that when it makes cuLaunchKernelEx itself fail with
// CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, launchDependent throws wb::DriverError with that code. It needs
// a device of compute capability 9.0 or newer, and says skipped elsewhere.
//
// Learn it in: lesson 20, step 1 ("A secondary that starts before its primary ends"), and step 4 ("Dependent launches in a graph: programmatic edges and edge data")
void launchDependent(CUfunction f, unsigned blocks, unsigned threads, void** args, CUstream stream) {
  wb::notDone();
}

// Exercise 2 of 3 (edge-report): Every edge of a graph, with the edge data that makes it programmatic
//
// Task: A tool that saves graphs, compares them or rebuilds them elsewhere must keep what each edge
// means: a programmatic edge saved as a plain one rebuilds a graph that waits for the whole kernel,
// and a caller that asks without edge data is refused. Write edgesOf.
//
//   R1: It returns every edge of graph, in the order the driver returns them, with its two nodes (to
//       depends on from) and its edge data (from_port, to_port and type of CUgraphEdgeData).
//   R2: It asks with the edge-data query, cuGraphGetEdges_v2 (CUDA 12.3 and newer; what
//       cuGraphGetEdges means from CUDA 13.0): first the number of edges (from, to and edgeData all
//       NULL), then the edges, with room for that many, so that any number of edges works.
//   R3: A graph without edges, with nodes or with none, gives an empty list, not an error.
//   R4: When a call fails, it throws wb::DriverError.
//
// The check: exercise20.edge-report compares your list, element by element and in order, with the
// driver's own answer for five graphs: a capture of two kernels, the second launched with
// CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION (one programmatic edge); a graph of four
// kernel nodes built by hand with a default edge, a programmatic edge from port
// CU_GRAPH_KERNEL_NODE_PORT_PROGRAMMATIC and one from CU_GRAPH_KERNEL_NODE_PORT_LAUNCH_ORDER; a chain
// of 41 empty nodes (40 edges); three empty nodes without an edge; and a graph with no node. Then it
// makes cuGraphGetEdges_v2 fail with
// CUDA_ERROR_INVALID_VALUE, the first call and then the second, and verifies that edgesOf throws
// wb::DriverError each time (so it asks twice, as the task says). It needs CUDA 12.3 and a device of
// compute capability 9.0 or newer, and says skipped elsewhere.
//
// Learn it in: lesson 20, step 4 ("Dependent launches in a graph: programmatic edges and edge data")
std::vector<Edge> edgesOf(CUgraph graph) {
  wb::notDone();
}

// Exercise 3 of 3 (capture-append): A node added by hand to a caller's capture, keeping its edge data
//
// Task: A library called inside its caller's stream capture adds one kernel node to the graph being
// captured by hand (to keep the node's handle, say, for cuGraphExecKernelNodeSetParams later). Write
// appendToCapture. The node can be added without dependencies (cuGraphAddKernelNode) and given them
// with their edge data (cuGraphAddDependencies_v2), or added with both (cuGraphAddNode_v2).
//
//   R1: It asks the stream for its capture status, graph and dependencies with their edge data
//       (cuStreamGetCaptureInfo_v3; what cuStreamGetCaptureInfo means from CUDA 13.0), and adds to
//       that graph a kernel node of f with the arguments args, one block of one thread, no dynamic
//       shared memory. It returns the node.
//   R2: The node depends on exactly what the stream's next work would depend on: every one of the
//       stream's dependencies, each with its edge data (which may be programmatic).
//   R3: Then the node is the stream's only dependency, with default edge data
//       (cuStreamUpdateCaptureDependencies_v2 with CU_STREAM_SET_CAPTURE_DEPENDENCIES).
//   R4: When the stream is not capturing (its status is not CU_STREAM_CAPTURE_STATUS_ACTIVE), it adds
//       nothing and throws wb::DriverError with CUDA_ERROR_ILLEGAL_STATE, the code
//       cuStreamUpdateCaptureDependencies gives for such a stream (wb::throwDriverError(
//       CUDA_ERROR_ILLEGAL_STATE, ...) makes one).
//   R5: When a call fails, it throws wb::DriverError.
//
// The check: exercise20.capture-append captures a kernel, sets the stream's dependency on it to a
// programmatic edge (cuStreamUpdateCaptureDependencies_v2), calls appendToCapture, then captures one
// more kernel; it verifies that the graph holds the three, that your node depends on the first
// alone with that programmatic edge data, that the last depends on your node alone with a default
// edge, that your node has one block of one thread and no dynamic shared memory, and that the graph
// runs them in that order (each adds 1 to what the one before left). Then
// a stream that has joined a second capturing stream (two dependencies, neither after the other):
// your node must depend on both. Then a stream that is not capturing: appendToCapture must throw
// wb::DriverError with CUDA_ERROR_ILLEGAL_STATE. Last, it makes cuStreamGetCaptureInfo_v3, and then
// cuStreamUpdateCaptureDependencies_v2, fail with CUDA_ERROR_INVALID_VALUE, and verifies that
// appendToCapture throws wb::DriverError each time. It does not check what your node is left as when
// a call after its creation fails. It needs CUDA 12.3 and a device of compute capability 9.0 or
// newer, and says skipped elsewhere.
//
// Learn it in: lesson 20, step 4 ("Dependent launches in a graph: programmatic edges and edge data"), and lesson 15, step 1
CUgraphNode appendToCapture(CUstream stream, CUfunction f, void** args) {
  wb::notDone();
}

}  // namespace ex20
