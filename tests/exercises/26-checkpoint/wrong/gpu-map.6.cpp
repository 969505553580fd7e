// Wrong (R5): does not check the unlock
//
// The restore is where things can go wrong; the unlock after it "only lets the job run". But when it
// fails, the job stays LOCKED, every CUDA call of it blocked, and the agent reports it moved and
// running. In "R5: an unlock that fails after the restore", restoreOnto returns: `failed` fails.
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
  cuCheckpointProcessUnlock(pid, nullptr);
#else
  (void)pid, (void)target;
  throw std::runtime_error("built with a CUDA older than 13.0: CUcheckpointRestoreArgs has no gpuPairs");
#endif
}

}  // namespace ex26
