// Wrong (R1): the target's size and duplicates are checked, but not that each ordinal is a device
//
// The driver checks ordinals anyway, so why check them here: because cuDeviceGetUuid then fails with
// a driver error (or a negative ordinal indexes before the vector), where the task asks for
// std::invalid_argument before any call. The case "R1: a target that is no permutation" gets another
// exception, or the check crashes, for a device past the last.
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
    if (t >= 0 && t < count && taken[t]) throw std::invalid_argument("target names a device twice");
    if (t >= 0 && t < count) taken[t] = true;
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
