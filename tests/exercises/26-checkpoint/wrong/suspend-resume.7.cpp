// Wrong (R3): answers false for every lock that fails, without asking the state again
//
// A lock with a timeout fails when the job does not let go, so a failed lock reads as "did not let
// go": false, try later. But a lock also fails when someone else locked the job meanwhile (a
// debugger, another agent); the job is then LOCKED, not running on, and the scheduler that was told
// "still running" leaves it blocked. In "R3: a lock that fails with the process no longer RUNNING
// ...", suspendGpu returns false: `failed` fails.
#include "exercises.hpp"

#include <stdexcept>

namespace ex26 {

#if CUDA_VERSION >= 12080
namespace {

CUprocessState stateOf(int pid) {
  CUprocessState s = CU_PROCESS_STATE_FAILED;
  CU_CHECK(cuCheckpointProcessGetState(pid, &s));
  return s;
}

}  // namespace

bool suspendGpu(int pid, unsigned timeoutMs) {
  const CUprocessState s = stateOf(pid);
  if (s == CU_PROCESS_STATE_CHECKPOINTED) return true;
  if (s != CU_PROCESS_STATE_RUNNING) throw std::runtime_error("the process is neither running nor checkpointed");
  CUcheckpointLockArgs args{};
  args.timeoutMs = timeoutMs;
  const CUresult locked = cuCheckpointProcessLock(pid, &args);
  if (locked != CUDA_SUCCESS) return false;  // it did not let go in time
  const CUresult checkpointed = cuCheckpointProcessCheckpoint(pid, nullptr);
  if (checkpointed != CUDA_SUCCESS) {
    cuCheckpointProcessUnlock(pid, nullptr);  // as it was found: running
    CU_CHECK(checkpointed);
  }
  return true;
}

void resumeGpu(int pid) {
  const CUprocessState s = stateOf(pid);
  if (s == CU_PROCESS_STATE_RUNNING) return;
  if (s == CU_PROCESS_STATE_FAILED) throw std::runtime_error("the process failed in a checkpoint or restore");
  if (s == CU_PROCESS_STATE_CHECKPOINTED) CU_CHECK(cuCheckpointProcessRestore(pid, nullptr));
  CU_CHECK(cuCheckpointProcessUnlock(pid, nullptr));
}
#else
bool suspendGpu(int, unsigned) { throw std::runtime_error("built with a CUDA older than 12.8: no checkpoint calls"); }
void resumeGpu(int) { throw std::runtime_error("built with a CUDA older than 12.8: no checkpoint calls"); }
#endif

}  // namespace ex26
