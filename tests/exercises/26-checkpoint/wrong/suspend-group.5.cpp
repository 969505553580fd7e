// Wrong (R1): no check for a process given twice
//
// A list built from several sources (a job's ranks, a container's processes) can name one process
// twice: its second lock is refused, and the job is reported as one that would not let go instead of
// a list to fix. The last case gets false, not std::invalid_argument, and sees locks.
#include "exercises.hpp"

#include <algorithm>
#include <stdexcept>
#include <vector>

namespace ex26 {

bool suspendAll(const std::vector<int>& pids, unsigned timeoutMs) {
#if CUDA_VERSION >= 12080
  for (size_t i = 0; i < pids.size(); ++i) {
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
  while (done > 0) cuCheckpointProcessRestore(pids[--done], nullptr);
  for (int pid : pids) cuCheckpointProcessUnlock(pid, nullptr);
  CU_CHECK(failed);
  return false;
#else
  (void)pids, (void)timeoutMs;
  throw std::runtime_error("built with a CUDA older than 12.8: no checkpoint calls");
#endif
}

}  // namespace ex26
