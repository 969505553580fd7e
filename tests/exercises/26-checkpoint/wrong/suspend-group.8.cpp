// Wrong (R6): refuses an empty list as a caller's mistake
//
// "A job with no process is a bug upstream": std::invalid_argument, like a pid given twice. But an
// empty job is one with nothing on the GPU (every process finished, or none started yet), and the
// task suspends it at once: true, with no call. In "R1 R6: a pid given twice ...",
// `ex26::suspendAll({}, kTimeout)` throws instead of returning true.
#include "exercises.hpp"

#include <algorithm>
#include <stdexcept>
#include <vector>

namespace ex26 {

bool suspendAll(const std::vector<int>& pids, unsigned timeoutMs) {
#if CUDA_VERSION >= 12080
  if (pids.empty()) throw std::invalid_argument("suspendAll: a job with no process");
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
