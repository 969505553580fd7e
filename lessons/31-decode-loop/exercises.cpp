// Lesson 31's exercises. Replace each body with your solution, then run: cmake --build build --target exercises-31

// The starting bodies use none of their parameters yet (warnings are errors in some builds).
#pragma GCC diagnostic ignored "-Wunused-parameter"

#include "exercises.hpp"
#include "exercise.hpp"

namespace ex31 {

// Exercise 1 of 4 (launch-step): One decode step, kernel by kernel
//
// Task: A decode step is a chain of tiny kernels whose arguments change every step. Write launchStep:
// the step at position pos of chain c, launched in stream s with cuLaunchKernel, one block of kBlock
// threads per kernel (kernels/decode_step.cu). At the first position of a cache block
// (pos % c.rowsPerBlock == 0) the step first opens the block: decode_open(cache row pos, rowsPerBlock
// * n) sets its floats to 0. Then c.ops launches of decode_op(dst, src, n, pos), the first reading a
// and writing b, each next one reading what the one before wrote (a and b in turn). Last,
// decode_store(row, src, n) copies the last op's output into the cache row at pos (row = cache + pos
// * n floats).
//
//   R1: After the step has run, cache row pos holds the chain's result for pos (each op: src * 0.5 +
//       pos, from what a and b held), and the rest of an opened block is 0.
//   R2: The step launches kernelsAt(c, pos) kernels: the open only at a block's first position.
//   R3: It makes no call that breaks a capture (no synchronisation, no allocation): a GLOBAL capture
//       of s stays ACTIVE and records the step.
//   R4: When a launch fails, it throws wb::DriverError.
//
// The check: exercise31.launch-step runs steps 0 to 5 (rowsPerBlock 4) eagerly and compares every
// cache row with the host's arithmetic, and the rows of the block step 4 opened; then captures steps
// 7 and 8 in a GLOBAL capture and verifies the capture is ACTIVE after each and that the graphs hold
// 4 and 5 kernel nodes (3 ops); last it makes the second cuLaunchKernel fail.
//
// Learn it in: lesson 31, step 2 ("Ways 1 and 2: launched one by one, or captured and instantiated every step")
void launchStep(const Chain& c, unsigned pos, CUstream s) {
  wb::notDone();
}

// Exercise 2 of 4 (set-step): Node by node, with the nodes kept
//
// Task: The cheapest update of an executable graph is to set the arguments of its kernel nodes
// (cuGraphExecKernelNodeSetParams), naming each by the node of the graph it was instantiated from:
// no capture, no new executable graph. Write setStep: from the next launch on, exec computes the step
// at pos, as launchStep launches it. nodes are the template's kernel nodes in the chain's order
// (chainNodes gives them): the open (where the step has one), the ops, the store.
//
//   R1: A launch of exec after setStep leaves the cache as launchStep(c, pos) would: every op with
//       pos and its a/b buffers, the store into row pos, the open (if any) of the block at pos.
//   R2: Only exec changes: the template's nodes keep their parameters, and no graph is captured,
//       instantiated or updated (the same exec and nodes serve every step).
//   R3: When nodes.size() is not kernelsAt(c, pos) (the step has another shape), it throws
//       std::invalid_argument before it changes anything.
//   R4: When a call fails, it throws wb::DriverError.
//
// The check: exercise31.set-step captures step 1 (rowsPerBlock 4, 3 ops), instantiates it, then sets
// steps 2 and 3 and launches after each, comparing the rows with the host's arithmetic and the
// template's store node with what it was; a captured step 4 (with its open) is set to step 8. Then it
// asks for step 4 on the graph of step 1 (another shape), and makes cuGraphExecKernelNodeSetParams fail.
//
// Learn it in: lesson 31, step 4 ("Way 4: set node by node, the nodes kept")
void setStep(CUgraphExec exec, const std::vector<CUgraphNode>& nodes, const Chain& c, unsigned pos) {
  wb::notDone();
}

// Exercise 3 of 4 (prepare-step): Set, update, or recapture, and the fallback
//
// Task: The decision every step makes in an engine that keeps its decode step as a graph. Write
// prepareStep, which leaves in g an executable graph for the step at pos, and releaseStepGraph,
// which gives back what g holds. The cheapest way that works:
//   - g holds no executable graph: capture the step (launchStep in a GLOBAL capture of s),
//     instantiate it; g.graph is the capture, g.nodes its chainNodes. Took::Instantiated.
//   - setNodes, and g.nodes has the step's shape (kernelsAt): setStep. Took::Set.
//   - otherwise (llama.cpp's way): capture the step afresh and cuGraphExecUpdate(g.exec, fresh). On
//     success, exec runs the fresh parameters while its nodes are still named by g.graph's: destroy
//     the fresh graph. Took::Updated.
//   - the driver refused the update (CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE; the result info says why,
//     a CU_GRAPH_EXEC_UPDATE_ERROR_*): its documented fallback, instantiate the fresh graph, destroy
//     the old exec and graph, and hold the new. Took::Reinstantiated.
//
//   R1: With no executable graph it captures and instantiates: g.exec launched computes the step;
//       g.graph and g.nodes are the capture and its chain. Took::Instantiated.
//   R2: With setNodes and the same shape it sets the nodes: no capture, no instantiation, the same
//       exec. Took::Set.
//   R3: Otherwise, a fresh capture and cuGraphExecUpdate; on success the same exec runs the step and
//       the fresh graph is destroyed (one graph and one exec held). Took::Updated.
//   R4: When the update is refused: *refused (where given) gets the result info's reason, and g holds
//       a new exec instantiated from the fresh graph, the old ones destroyed: one graph and one exec
//       held, nothing leaked. Took::Reinstantiated.
//   R5: Any other failure throws wb::DriverError, and g still holds valid handles (nothing leaked
//       once releaseStepGraph gives them back); a capture it began is ended.
//
// The check: exercise31.prepare-step prepares steps 1, 2 and 3 (rowsPerBlock 4) with setNodes and
// without, then step 4 (one kernel more) and 5, verifying what each took, the exec handle, the graphs
// and execs held (through the ledger), the refusal's reason (TOPOLOGY_CHANGED) and every cache row;
// then 40 steps, each prepared and launched without waiting, give the same cache as launchStep
// eagerly. Last, cuGraphExecUpdate failing with CUDA_ERROR_INVALID_VALUE, and cuGraphInstantiate
// failing in the fallback.
//
// Learn it in: lesson 31, steps 3 and 4 ("Way 3: capture, then cuGraphExecUpdate (llama.cpp's way)", "Way 4: set node by node, the nodes kept")
Took prepareStep(StepGraph& g, const Chain& c, unsigned pos, CUstream s, bool setNodes,
                 CUgraphExecUpdateResult* refused) {
  wb::notDone();
}

void releaseStepGraph(StepGraph& g) {
  wb::notDone();
}

// Exercise 4 of 4 (device-step): A graph that nothing updates
//
// Task: Take what changes out of the graph: kernels that read the position from device memory
// (c.pos, one unsigned) and a last kernel that advances it, so one executable graph computes every
// step with nothing set or updated. The shape change, a block opened every rowsPerBlock positions,
// becomes a conditional IF node (CUDA 12.4) whose body the first kernel switches on. Write
// buildDeviceStep: a new graph of
//   decode_first_dev(b, a, n, pos, rowsPerBlock, opens) -> IF(opens){ decode_open_dev(cache, n,
//   rowsPerBlock, pos) } -> c.ops - 1 x decode_op_dev(dst, src, n, pos) -> decode_store_dev(cache,
//   last output, n, pos)
// with opens a conditional handle of the graph (cuGraphConditionalHandleCreate, default 0), every
// kernel one block of kBlock threads, a and b in turn as launchStep uses them.
//
//   R1: Launched once per step with nothing changed in between, from position 0, it leaves the cache
//       as launchStep for positions 0, 1, 2, ... does, and the position advanced by one per launch.
//   R2: The open runs only inside the body of an IF conditional node: the graph's own nodes are
//       c.ops + 1 kernels and one conditional node.
//   R3: The nodes form one chain (one root, each node after the one before), so the kernels run in
//       the step's order.
//   R4: When a call fails, it throws wb::DriverError and destroys the graph it began.
//
// The check: exercise31.device-step builds the graph (3 ops, rowsPerBlock 4), checks its nodes and
// edges, launches it 9 times in a row without waiting and compares the cache and the position with
// launchStep's; then makes cuGraphConditionalHandleCreate fail and counts the graphs held. It needs
// CUDA 12.4 and says skipped elsewhere.
//
// Learn it in: lesson 31, step 5 ("Way 5: nothing updated: the step reads device memory")
CUgraph buildDeviceStep(const DeviceChain& c, CUcontext ctx) {
  wb::notDone();
}

}  // namespace ex31
