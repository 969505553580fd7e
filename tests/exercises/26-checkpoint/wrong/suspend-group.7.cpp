// Wrong (R4): checkpoints the processes in reverse order, the last one locked first
//
// Locks and their undoing come in stack order, so the checkpoints follow the stack too. But the task
// checkpoints in the order given: a server listed first is dumped before the workers it feeds, as
// the job's tooling (and CRIU's plugin, dumping each as it goes) expects. In "R2 R4: two processes
// ...", the calls seen are "lock A, lock B, checkpoint B, checkpoint A": the order check fails.
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
  size_t done = 0;  // counted from the end: pids[size - 1 - i]
  CUresult failed = CUDA_SUCCESS;
  for (; done < pids.size(); ++done)
    if ((failed = cuCheckpointProcessCheckpoint(pids[pids.size() - 1 - done], nullptr)) != CUDA_SUCCESS) break;
  if (failed == CUDA_SUCCESS) return true;
  for (size_t i = 0; i < done; ++i) cuCheckpointProcessRestore(pids[pids.size() - done + i], nullptr);
  for (int pid : pids) cuCheckpointProcessUnlock(pid, nullptr);
  CU_CHECK(failed);
  return false;
#else
  (void)pids, (void)timeoutMs;
  throw std::runtime_error("built with a CUDA older than 12.8: no checkpoint calls");
#endif
}

}  // namespace ex26
