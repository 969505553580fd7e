// Lesson 26's exercises. Replace each body with your solution, then run: cmake --build build --target exercises-26
#include "exercises.hpp"
#include "exercise.hpp"

// The starting bodies use none of their parameters yet (warnings are errors in some builds).
#pragma GCC diagnostic ignored "-Wunused-parameter"

namespace ex26 {

// Exercise 1 of 3 (suspend-resume): Take a job's GPU away and give it back, never half-way
//
// Task: A scheduler takes the GPU away from a low-priority job and gives it back later. It must
// never hang on a job that does not let go, and never leave one half-suspended. Write suspendGpu
// and resumeGpu for the process pid, another process that has initialised CUDA.
//
//   R1: suspendGpu first asks pid's state (cuCheckpointProcessGetState); CHECKPOINTED: nothing to
//       do, it returns true with no other call.
//   R2: RUNNING: it locks pid with cuCheckpointProcessLock, with timeoutMs in CUcheckpointLockArgs
//       (every other field zero) so that the lock gives up after that long, then checkpoints it and
//       returns true, pid CHECKPOINTED.
//   R3: If the lock fails, it returns false when pid is still RUNNING (it did not let go in time),
//       having made no further lock, checkpoint or unlock call, and throws when it is not.
//   R4: If the checkpoint fails, it unlocks pid (it runs on, as it was found) and throws.
//   R5: Any other state (LOCKED: someone else is working on it; FAILED): suspendGpu throws
//       std::runtime_error and changes nothing (no call but the state).
//   R6: resumeGpu: CHECKPOINTED: it restores pid (which leaves it LOCKED) and then unlocks it;
//       LOCKED: it unlocks it only; RUNNING: nothing to do, no call but the state; FAILED: it
//       throws std::runtime_error, with no call but the state.
//   R7: A call that fails throws (CU_CHECK does).
//
// The check: exercise26.suspend-resume starts a child process that holds device memory with a
// pattern, and stands between the code and the cuCheckpointProcess* calls, so it sees each call,
// its process and its arguments. It suspends the child (the lock must carry timeoutMs and zeros,
// the child must end CHECKPOINTED), resumes it (restore before unlock, the child RUNNING, every
// word of its memory intact), suspends a CHECKPOINTED child (true, no lock) and resumes a RUNNING
// one (no call but the state). It makes the lock fail (false, nothing else called, still RUNNING),
// the checkpoint fail (thrown, the child RUNNING again), and the restore fail (thrown). It locks
// the child itself: suspendGpu must throw and leave it LOCKED, resumeGpu must unlock it without a
// restore. It makes the lock fail once more, with the child locked by the check just before it (so
// it is LOCKED, not RUNNING): suspendGpu must throw. It makes the state query answer FAILED for the
// child: suspendGpu and resumeGpu must throw std::runtime_error with no call but the state. A lock
// that really runs out of time, and a process that really failed, cannot be provoked on demand, so
// the check makes the calls answer as they would.
//
// Learn it in: lesson 26, step 1 ("Lock, checkpoint, restore, unlock") and step 3 ("What the lock
// waits for")
bool suspendGpu(int pid, unsigned timeoutMs) {
  wb::notDone();
}

void resumeGpu(int pid) {
  wb::notDone();
}

// Exercise 2 of 3 (gpu-map): Bring a suspended job back on other GPUs
//
// Task: A node agent moves a suspended job to other GPUs of the same kind: a GPU is drained for
// maintenance, or the job resumes where another GPU is free. Write restoreOnto: pid is
// CHECKPOINTED; restore it so that what it had on device i (an ordinal of this process) goes to
// device target[i].
//
//   R1: target must name every device of this process (target.size() == cuDeviceGetCount) and be a
//       permutation (each ordinal from 0 to count - 1 once): otherwise it throws
//       std::invalid_argument before any cuCheckpointProcess* call, leaving pid as it was.
//   R2: It gives cuCheckpointProcessRestore one CUcheckpointGpuPair per device, in any order,
//       oldUuid the UUID of device i (cuDeviceGetUuid) and newUuid that of device target[i], the
//       devices that stay where they are included (the reference: the pairs "must contain every
//       checkpointed GPU"), gpuPairsCount their number, every other field of
//       CUcheckpointRestoreArgs zero.
//   R3: After the restore it unlocks pid, so that it runs.
//   R4: If the restore fails, it throws and leaves pid CHECKPOINTED (no unlock).
//   R5: If the unlock fails, it throws.
//   R6 (not checked: every machine at hand builds with CUDA 13.0): CUDA 13.0 added gpuPairs: built
//       with an older toolkit, it throws std::runtime_error saying so, before any call.
//
// The check: exercise26.gpu-map starts a child that holds device memory, checkpoints it, and stands
// between the code and cuCheckpointProcessRestore, so it sees the pairs given. On one GPU it
// restores onto {0}: one pair, device 0's UUID to itself, zeros elsewhere, the child RUNNING and
// its memory intact. Targets of the wrong size, past the last device, negative, or naming a device
// twice (with two GPUs; on one that part reports itself skipped) must throw std::invalid_argument
// with no restore, the child still CHECKPOINTED. It makes the restore fail (thrown, no unlock), and
// the unlock after a restore (thrown). With two GPUs, a child holding memory on both is restored
// onto {1, 0}: the pairs must swap the two UUIDs, and its memory on both comes back intact; with
// one GPU that case reports itself skipped. Built with a toolkit older than 13.0 the check reports
// itself skipped.
//
// Learn it in: lesson 26, step 6 ("Restoring onto the other GPU")
void restoreOnto(int pid, const std::vector<int>& target) {
  wb::notDone();
}

// Exercise 3 of 3 (suspend-group): Suspend every process of a job, or none
//
// Task: A job is several processes that work together, a server and its workers: checkpoint one
// while another still runs, and the other may send it work, or wait for it, for ever. CRIU's CUDA
// plugin, too, locks each process as CRIU takes hold of it, and checkpoints them only later, as it
// dumps each. Write suspendAll.
//
//   R1: Every process of pids must be RUNNING (cuCheckpointProcessGetState) and no pid may appear
//       twice: otherwise it throws std::invalid_argument before any lock.
//   R2: It locks every process, in the order given, each with timeoutMs in CUcheckpointLockArgs
//       (every other field zero), all of them before any checkpoint.
//   R3: If a lock fails, it unlocks the ones already locked, in reverse order, and returns false:
//       no process checkpointed, all of them RUNNING.
//   R4: Once all are locked, it checkpoints them in the order given, and returns true when all are
//       CHECKPOINTED.
//   R5: If a checkpoint fails, it restores the ones already checkpointed, in reverse order, unlocks
//       every process, and throws: all of them RUNNING again.
//   R6: An empty list: it returns true, with no call.
//
// The check: exercise26.suspend-group starts two child processes holding device memory and stands
// between the code and the cuCheckpointProcess* calls, so it sees each call in order, its process
// and its arguments. It suspends both: every lock (each with timeoutMs) before any checkpoint, both
// children CHECKPOINTED, and, brought back by the check, their memory intact. It makes the second
// lock fail (false, the first unlocked, no checkpoint, both RUNNING) and the second checkpoint fail
// (thrown, the first restored before the unlocks, both RUNNING, memory intact). A pid given twice,
// and a child the check has locked itself, must throw std::invalid_argument with no lock; an empty
// list must return true with no call.
//
// Learn it in: lesson 26, step 3 ("What the lock waits for") and step 5 ("Calls in the wrong state")
bool suspendAll(const std::vector<int>& pids, unsigned timeoutMs) {
  wb::notDone();
}

}  // namespace ex26
