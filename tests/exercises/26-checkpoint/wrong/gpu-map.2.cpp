// Wrong (R1): the target's size and range are checked, but not that it names each device once
// Two devices: with one device every target of the right size and range is {0}, a permutation
//
// Sizes and ranges are the usual checks; a device named twice passes them, and two GPUs' state would
// be asked onto one. The case "R1: a target that is no permutation" sees no std::invalid_argument for a
// target that names the last device twice (it exists only where there are two devices).
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
    if (t < 0 || t >= count) throw std::invalid_argument("target must name devices of this process");
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
  CU_CHECK(cuCheckpointProcessUnlock(pid, nullptr));
#else
  (void)pid, (void)target;
  throw std::runtime_error("built with a CUDA older than 13.0: CUcheckpointRestoreArgs has no gpuPairs");
#endif
}

}  // namespace ex26
