// Wrong (R4): unlocks the process when the restore fails, so that it is not left locked
//
// "Never leave a job locked" is the lesson of exercise 1, so the failure path unlocks it before it
// throws. But a process whose restore failed is still CHECKPOINTED: its unlock is refused, or worse,
// and the agent cannot retry the restore from the state the task promises. In "R4: a restore that
// fails ...", the check sees an unlock: `count("unlock") == 0` fails.
#include "exercises.hpp"

#include <stdexcept>
#include <vector>

namespace ex26 {

void restoreOnto(int pid, const std::vector<int>& target) {
#if CUDA_VERSION >= 13000
  int count = 0;
  CU_CHECK(cuDeviceGetCount(&count));
  if (target.size() != static_cast<size_t>(count)) throw std::invalid_argument("target must name every device");
  std::vector<bool> taken(count, false);
  for (int t : target) {
    if (t < 0 || t >= count || taken[t]) throw std::invalid_argument("target must be a permutation of the devices");
    taken[t] = true;
  }
  std::vector<CUcheckpointGpuPair> pairs(count);
  for (int i = 0; i < count; ++i) {
    CU_CHECK(cuDeviceGetUuid(&pairs[i].oldUuid, i));
    CU_CHECK(cuDeviceGetUuid(&pairs[i].newUuid, target[i]));
  }
  CUcheckpointRestoreArgs args{};
  args.gpuPairs = pairs.data();
  args.gpuPairsCount = static_cast<unsigned>(count);
  const CUresult restored = cuCheckpointProcessRestore(pid, &args);
  if (restored != CUDA_SUCCESS) {
    cuCheckpointProcessUnlock(pid, nullptr);  // not left locked
    CU_CHECK(restored);
  }
  CU_CHECK(cuCheckpointProcessUnlock(pid, nullptr));
#else
  (void)pid, (void)target;
  throw std::runtime_error("built with a CUDA older than 13.0: CUcheckpointRestoreArgs has no gpuPairs");
#endif
}

}  // namespace ex26
