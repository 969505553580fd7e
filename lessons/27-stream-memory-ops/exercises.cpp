// Lesson 27's exercises. Replace each body with your solution, then run: cmake --build build --target exercises-27

// The starting bodies use none of their parameters yet (warnings are errors in some builds).
#pragma GCC diagnostic ignored "-Wunused-parameter"

#include "exercises.hpp"
#include "exercise.hpp"

namespace ex27 {

// Exercise 1 of 3 (ticket-wait): Hold a stream until a proxy's ticket comes
//
// Task: A communication proxy thread counts the transfers it has finished in a 32-bit word of mapped
// host memory, and the engine's stream must not start the kernel that reads transfer number `ticket`
// before that count has reached it. The count only grows, may skip numbers (the proxy may finish
// several at once) and wraps around past 0xffffffff. Write holdUntil.
//
//   R1: Work queued in stream after the call does not run while the word at flag is below ticket,
//       compared cyclically as the reference's GEQ does ((int32_t)(*flag - ticket) < 0): a flag of
//       0xfffffffe is below a ticket of 3.
//   R2: That work runs once the word has reached ticket or gone past it.
//   R3: It returns at once: it only enqueues the wait, and waits for nothing on the host.
//   R4: When the driver refuses the call, it throws wb::DriverError (CU_CHECK does).
//
// The check: exercise27.ticket-wait queues a write it can see before your wait and a stamp kernel
// after it, sees the stream reach your wait, and verifies that the stamp has not run 20 ms later
// with the flag 4 below a ticket of 5, 2 below 6 (the two share a bit), and 0xfffffffe below 3; then
// that it runs within 2 s once the flag is set to the ticket or to 4 past it. It counts the calls
// that wait on the host (cuStreamSynchronize, cuStreamQuery, cuCtxSynchronize) during your call, with
// a thread that releases the flag after 3 s so that nothing hangs, and makes cuStreamWaitValue32
// fail once.
//
// Learn it in: lesson 27, step 2 ("A stream held by a flag in host memory")
void holdUntil(CUstream stream, CUdeviceptr flag, cuuint32_t ticket) {
  wb::notDone();
}

// Exercise 2 of 3 (batch-handoff): Wait for one word and publish another in one call
//
// Task: A pipeline stage hands work on: its stream waits until the stage before it has published
// sequence number readySeq in a 32-bit word, then publishes its own 64-bit sequence number doneSeq
// for the stage after it. It does both in one cuStreamBatchMemOp, which saves a call. Write
// handoff.
//
//   R1: The write to done happens only after the word at ready has reached readySeq (cyclically,
//       as GEQ compares): while ready is below it, done keeps its old value.
//   R2: done receives all 64 bits of doneSeq.
//   R3: Both operations go in one cuStreamBatchMemOp call, wait first; no cuStreamWaitValue* or
//       cuStreamWriteValue* call.
//   R4: When the driver refuses the call, it throws wb::DriverError.
//
// The check: exercise27.batch-handoff puts ready and done in mapped host memory, queues a write it
// can see before your call, and verifies that done is unchanged 20 ms after the stream reached your
// operations with ready one below readySeq; then that done reads doneSeq (2^40 + 5) within 2 s of
// setting ready; it counts the calls of cuStreamBatchMemOp and of the four single operations during
// your call, and makes cuStreamBatchMemOp fail once. It needs CAN_USE_64_BIT_STREAM_MEM_OPS.
//
// Learn it in: lesson 27, step 4 ("Several operations in one call")
void handoff(CUstream stream, CUdeviceptr ready, cuuint32_t readySeq, CUdeviceptr done, cuuint64_t doneSeq) {
  wb::notDone();
}

// Exercise 3 of 3 (wait-node): A graph node that waits for a flag
//
// Task: A decode loop captured once as a graph must still wait, at each replay, for the host to say
// that the next request's inputs are in place. Write addWaitNode: a node of the graph that holds what
// depends on it until a 32-bit word reaches a value.
//
//   R1: A node that depends on it does not run while the word at flag is below value (cyclic GEQ),
//       and runs once the word has reached value or gone past it.
//   R2: The new node depends on exactly the nodes deps[0..count) (none when count is 0).
//   R3: It is a batch mem-op node (CU_GRAPH_NODE_TYPE_BATCH_MEM_OP) of context ctx.
//   R4: When the driver refuses the call, it throws wb::DriverError.
//
// The check: exercise27.wait-node adds a kernel node after yours, instantiates and launches the graph
// with the flag below value, verifies that the kernel has not run 20 ms later, and that it runs within
// 2 s once the flag is set to value + 3; it reads the node's type, its parameters' context
// (cuGraphBatchMemOpNodeGetParams; the context given is not the current one) and its dependencies
// (with two nodes before it and with none), and makes cuGraphAddBatchMemOpNode fail once.
//
// Learn it in: lesson 27, step 5 ("The same in a graph")
CUgraphNode addWaitNode(CUgraph graph, CUcontext ctx, const CUgraphNode* deps, size_t count, CUdeviceptr flag,
                        cuuint32_t value) {
  wb::notDone();
}

}  // namespace ex27
