// Wrong (R2): pairs only for the devices that move
//
// A device that stays where it is seems to need no pair, but the reference wants the pairs to
// "contain every checkpointed GPU". The case "R2 R3: onto the same devices" sees a restore with no pair.
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
  std::vector<CUcheckpointGpuPair> pairs;
  for (int i = 0; i < count; ++i) {
    if (target[i] == i) continue;
    CUcheckpointGpuPair p{};
    CU_CHECK(cuDeviceGetUuid(&p.oldUuid, i));
    CU_CHECK(cuDeviceGetUuid(&p.newUuid, target[i]));
    pairs.push_back(p);
  }
  CUcheckpointRestoreArgs args{};
  args.gpuPairs = pairs.data();
  args.gpuPairsCount = static_cast<unsigned>(pairs.size());
  CU_CHECK(cuCheckpointProcessRestore(pid, &args));
  CU_CHECK(cuCheckpointProcessUnlock(pid, nullptr));
#else
  (void)pid, (void)target;
  throw std::runtime_error("built with a CUDA older than 13.0: CUcheckpointRestoreArgs has no gpuPairs");
#endif
}

}  // namespace ex26
