// Wrong (R3): a lock that gives up is thrown as an error instead of answered with false
//
// CU_CHECK around every call is the habit of the course, but a lock that timed out is an answer
// (the job did not let go in time), not a failure: the scheduler asked for a yes or no. The case
// "R3: a lock that gives up" gets an exception instead of false.
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
  CU_CHECK(locked);
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
