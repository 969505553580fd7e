// Wrong (R3): discards the region instead of saving it, whatever the caller asked
#include "exercises.hpp"

#include <string>

namespace ex32 {

// Every stream asked before anything is touched; cuStreamQuery never waits. NOT_READY is the one
// answer that means "still working": any other failure is an error, not a refusal.
void sleepWhenIdle(Region& region, void* saveTo, const std::vector<CUstream>& users) {
  for (size_t i = 0; i < users.size(); ++i) {
    const CUresult rc = cuStreamQuery(users[i]);
    if (rc == CUDA_ERROR_NOT_READY)
      throw SleepRefused("sleep refused: stream " + std::to_string(i) + " of " + std::to_string(users.size()) +
                         " that use this region still has work; wait for it (cuStreamSynchronize) and sleep again");
    CU_CHECK(rc);
  }
  (void)saveTo;  // "the caller re-reads the weights anyway"
  sleepRegion(region, nullptr);
}

}  // namespace ex32
