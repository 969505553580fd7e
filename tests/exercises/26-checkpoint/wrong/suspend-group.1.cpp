// Wrong (R2): each process locked and checkpointed in turn, the next one still running meanwhile
//
// Suspending one process after the other reuses exercise 1 as it is, but while the first is
// checkpointed the second still runs and may wait for it; and when the second will not let go, the
// first is already checkpointed. The first case sees a checkpoint between the two locks.
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
  for (size_t i = 0; i < pids.size(); ++i) {
    CUcheckpointLockArgs args{};
    args.timeoutMs = timeoutMs;
    if (cuCheckpointProcessLock(pids[i], &args) != CUDA_SUCCESS) {
      for (size_t j = i; j > 0; --j) {  // the ones suspended already come back
        cuCheckpointProcessRestore(pids[j - 1], nullptr);
        cuCheckpointProcessUnlock(pids[j - 1], nullptr);
      }
      return false;
    }
    const CUresult failed = cuCheckpointProcessCheckpoint(pids[i], nullptr);
    if (failed != CUDA_SUCCESS) {
      cuCheckpointProcessUnlock(pids[i], nullptr);
      for (size_t j = i; j > 0; --j) {
        cuCheckpointProcessRestore(pids[j - 1], nullptr);
        cuCheckpointProcessUnlock(pids[j - 1], nullptr);
      }
      CU_CHECK(failed);
    }
  }
  return true;
#else
  (void)pids, (void)timeoutMs;
  throw std::runtime_error("built with a CUDA older than 12.8: no checkpoint calls");
#endif
}

}  // namespace ex26
