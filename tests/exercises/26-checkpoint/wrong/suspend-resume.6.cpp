// Wrong (R1): suspend locks without asking the state first
//
// Lock, then checkpoint, the order of the lesson, with no look at the state: a job suspended already
// is CHECKPOINTED, its lock is refused, and the code, finding it not RUNNING, throws. The case "R1 R6: a
// CHECKPOINTED process is suspended already" gets an exception instead of true.
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
  CUcheckpointLockArgs args{};
  args.timeoutMs = timeoutMs;
  const CUresult locked = cuCheckpointProcessLock(pid, &args);
  if (locked != CUDA_SUCCESS) {
    if (stateOf(pid) == CU_PROCESS_STATE_RUNNING) return false;  // it did not let go in time
    CU_CHECK(locked);
  }
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
