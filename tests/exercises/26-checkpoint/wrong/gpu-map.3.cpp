// Wrong (R3): restored, and never unlocked
//
// The restore "brings it back", so the job looks done; but the reference leaves a restored process
// LOCKED, every CUDA call of it blocked. The case "R2 R3: onto the same devices" finds the child LOCKED.
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
  CU_CHECK(cuCheckpointProcessRestore(pid, &args));
#else
  (void)pid, (void)target;
  throw std::runtime_error("built with a CUDA older than 13.0: CUcheckpointRestoreArgs has no gpuPairs");
#endif
}

}  // namespace ex26
