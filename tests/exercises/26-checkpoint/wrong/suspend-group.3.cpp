// Wrong (R5): when a checkpoint fails, every process is unlocked, the checkpointed ones without a restore
//
// Undoing the locks looks like undoing everything, but a CHECKPOINTED process must be restored before
// it can be unlocked: its unlock is refused (and ignored here), and it stays checkpointed. The case
// "R5: the second checkpoint fails" sees no restore, and the first child not RUNNING.
#include "exercises.hpp"

#include <algorithm>
#include <stdexcept>
#include <vector>

namespace ex26 {

bool suspendAll(const std::vector<int>& pids, unsigned timeoutMs) {
#if CUDA_VERSION >= 12080
  for (size_t i = 0; i < pids.size(); ++i) {
    if (std::count(pids.begin(), pids.end(), pids[i]) > 1) throw std::invalid_argument("a process given twice");
    CUprocessState s = CU_PROCESS_STATE_FAILED;
    CU_CHECK(cuCheckpointProcessGetState(pids[i], &s));
    if (s != CU_PROCESS_STATE_RUNNING) throw std::invalid_argument("a process that is not running");
  }
  size_t locked = 0;
  for (; locked < pids.size(); ++locked) {
    CUcheckpointLockArgs args{};
    args.timeoutMs = timeoutMs;
    if (cuCheckpointProcessLock(pids[locked], &args) != CUDA_SUCCESS) break;
  }
  if (locked < pids.size()) {
    while (locked > 0) CU_CHECK(cuCheckpointProcessUnlock(pids[--locked], nullptr));
    return false;
  }
  size_t done = 0;
  CUresult failed = CUDA_SUCCESS;
  for (; done < pids.size(); ++done)
    if ((failed = cuCheckpointProcessCheckpoint(pids[done], nullptr)) != CUDA_SUCCESS) break;
  if (failed == CUDA_SUCCESS) return true;
  for (int pid : pids) cuCheckpointProcessUnlock(pid, nullptr);
  CU_CHECK(failed);
  return false;
#else
  (void)pids, (void)timeoutMs;
  throw std::runtime_error("built with a CUDA older than 12.8: no checkpoint calls");
#endif
}

}  // namespace ex26
