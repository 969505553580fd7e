// Lesson 16's exercises. Replace each body with your solution, then run: cmake --build build --target exercises-16
#include "exercises.hpp"
#include "exercise.hpp"

// The starting bodies use none of their parameters yet (warnings are errors in some builds).
#pragma GCC diagnostic ignored "-Wunused-parameter"

namespace ex16 {

// Exercise 1 of 3 (shared-memory-launch): A launch whose shared memory is known only at run time
//
// Task: An inference engine picks a kernel's tile size from the model it loads, so the dynamic
// shared memory a launch needs is known only at run time, and it is often more than 48 KiB. Write
// launchWithSharedMemory, which launches f with that much and raises f's
// CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES where the launch needs it. The most the device
// can ever give f is its opt-in limit per block
// (CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN) minus f's static shared memory.
//
//   R1: It launches f (a function of the current context, which need not be a primary context)
//       over `blocks` blocks of `threads` threads (1-D), with args and sharedBytes of dynamic
//       shared memory per block.
//   R2: The launch goes into stream, behind the work already there, without waiting for it.
//   R3: It raises the attribute to sharedBytes only when it allows less now, and never lowers it.
//   R4: The attribute belongs to f, one function in one context: it reads it, it does not remember
//       it.
//   R5: When sharedBytes is more than the device can ever give f, sizes past 32 bits included, it
//       throws std::length_error before changing anything or launching.
//   R6: That message names both numbers as decimal counts of bytes.
//   R7: Any other failure (a raise, a launch) throws wb::DriverError (CU_CHECK).
//   R8: The caller's context stack is as it was, and it holds nothing.
//
// The check: exercise16.shared-memory-launch loads smem_sum afresh for each case and launches it
// through your function. With 16 KiB, in a stream a gate kernel holds, it verifies that the call
// returned while the gate was closed, that the kernel had not run by then (it synchronises the
// legacy stream first: a kernel launched there would have), that the sums are right once the
// stream ran, and that the attribute was left as it was. Past the default, at 100 KiB and at
// exactly the limit, it verifies that each launch ran, summed right and left the attribute at least
// as large as it asked, and that a smaller launch afterwards left it as large. 4 bytes past the
// limit, and at 4 GiB + 16 KiB, it verifies that your function threw std::length_error naming both
// numbers, launched nothing and left the attribute as it was. Last, after a launch of the primary
// context's function, it launches the same kernel's function of a context of its own (on the
// machine's last device) with the same shared memory, and verifies the sums, the caller's context
// stack and that nothing is left held. It makes the raise of the attribute fail, and then the
// launch (the check fails the call itself), and verifies that your function threw wb::DriverError
// each time. Between identical GPUs it cannot tell the device of the current context from device 0.
//
// Learn it in: lesson 16, step 2 ("More than 48 KiB of dynamic shared memory")
void launchWithSharedMemory(CUfunction f, unsigned blocks, unsigned threads, size_t sharedBytes, void** args,
                            CUstream stream) {
  wb::notDone();
}

// Exercise 2 of 3 (block-size): A block size from the occupancy calculator, when shared memory grows with the block
//
// Task: A kernel that keeps a tile per thread in shared memory needs more of it the larger its
// blocks are, and the usual 256 threads may leave most of an SM idle. Choose stage's block size
// with cuOccupancyMaxPotentialBlockSize. The calculator asks for the shared memory of each block
// size through a function you pass (CUoccupancyB2DSize); it takes the block size and nothing else.
//
//   R1: The block size is the one, in whole warps and within stage's maximum, at which an SM holds
//       the most threads of stage, each block having blockSize * kStageFloatsPerThread * 4 bytes of
//       dynamic shared memory.
//   R2: It returns the block size the calculator found, as it is: no rounding, no cap of its own.
//
// The check: exercise16.block-size first allows stage all the dynamic shared memory the device
// can give it, then calls your function. It verifies that the size is whole warps within stage's
// maximum threads, that with it an SM holds as many threads of stage as with any other size in
// whole warps (each counted by cuOccupancyMaxActiveBlocksPerMultiprocessor with its own shared
// memory), and that stage launched with it, over 10000 elements, computes every element right.
//
// Learn it in: lesson 16, step 3 ("Occupancy: how many blocks an SM holds")
int chooseStageBlockSize(CUfunction stage) {
  wb::notDone();
}

#if CUDA_VERSION >= 12040
// Exercise 3 of 3 (partitions): A latency partition beside a throughput partition
//
// Task: A serving process runs long batched kernels and short latency-critical ones on one GPU. A
// batch that fills the GPU makes the short kernels wait for free SMs; reserving SMs for them keeps
// them waiting for nothing. Write Partitions (declared in exercises.hpp). The reference warns that
// the remainder of a split "does not have the same functional or performance guarantees as the
// groups" and that "its use should be carefully planned" (CUDA 13.1 calls it unstructured): it
// suits batch kernels that need no co-scheduled SMs, not large thread-block clusters. Green
// contexts confine only the work launched through them: a kernel of the primary context may still
// run on any SM.
//
//   R1: It splits dev's SMs with cuDevSmResourceSplitByCount into one group of at least latencySms
//       SMs, the latency partition, and takes the SMs no group took (the split's remaining
//       resource) as the throughput partition: the two have the device's SMs between them, once
//       each, and a full throughput partition does not hold up the latency partition's kernels.
//   R2: Each partition is a green context on dev, whichever context is current.
//   R3: Each partition has a non-blocking stream of its own green context.
//   R4: The caller's context stack is as it was, also when the constructor throws.
//   R5: If a call fails half way, it destroys what was made, then throws.
//   R6: The destructor destroys the streams, then the green contexts: cuGreenCtxDestroy does not
//       destroy a green context's streams, and the 13.0 reference says every later call on them,
//       cuStreamDestroy included, returns CUDA_ERROR_CONTEXT_IS_DESTROYED (from 13.1:
//       CUDA_ERROR_STREAM_DETACHED, cuStreamDestroy excepted).
//
// The check: exercise16.partitions makes Partitions(device 0, 16) while device 0's primary context
// is current. It verifies that the caller's context stack is unchanged; that the latency green
// context has at least 16 SMs and that the two have the device's SMs between them, counted once
// (cuGreenCtxGetDevResource); that each stream belongs to its green context (cuStreamGetGreenCtx)
// and is non-blocking (cuStreamGetFlags); that a kernel in each stream runs on no more distinct SMs
// than its partition has, none shared; and that after the destructor nothing is left held. With
// two devices it makes Partitions(device 1, 16) the same way and verifies that both green contexts
// are on device 1 (with one device that part reports the exercise skipped). It fills the
// throughput partition with a kernel that holds every thread of its SMs until the check opens a
// gate, and verifies that a kernel in the latency stream runs to the end while every block of the
// holder still waits. Last, it makes the second cuGreenCtxCreate fail, then the first stream and
// the second (cuGreenCtxStreamCreate, or cuStreamCreate), and verifies each time that the constructor threw,
// that nothing is left held and that the context stack is as it was. Where the device has no green
// contexts, or fewer than 32 SMs, the exercise reports itself skipped; under compute-sanitizer, the
// full partition is. Green contexts destroyed before their streams show as streams left held only
// on a driver that refuses the late cuStreamDestroy (13.0 does, 13.1 allows it).
//
// Learn it in: lesson 16, step 7 ("Green contexts: splitting the SMs"), and step 9 ("A full partition does not hold up the other")
Partitions::Partitions(CUdevice dev, unsigned latencySms) {
  wb::notDone();
}

Partitions::~Partitions() {}
#endif

}  // namespace ex16
