// Wrong (R6): resume unlocks a FAILED process, as it would a LOCKED one
//
// "Whatever is not running or checkpointed, unlock it, and let the driver say no": the FAILED branch
// looks like one more case of the same. But a process whose checkpoint or restore failed needs a
// person, not one more call, and the task throws std::runtime_error for it, with no call. In "R5
// R6: a FAILED process ...", resumeGpu makes an unlock: `seen().empty()` fails.
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
  if (s == CU_PROCESS_STATE_CHECKPOINTED) CU_CHECK(cuCheckpointProcessRestore(pid, nullptr));
  CU_CHECK(cuCheckpointProcessUnlock(pid, nullptr));
}
#else
bool suspendGpu(int, unsigned) { throw std::runtime_error("built with a CUDA older than 12.8: no checkpoint calls"); }
void resumeGpu(int) { throw std::runtime_error("built with a CUDA older than 12.8: no checkpoint calls"); }
#endif

}  // namespace ex26
