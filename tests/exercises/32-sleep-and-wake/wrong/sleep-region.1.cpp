// Wrong (R1): unmaps first and saves afterwards: the copy reads addresses with nothing behind them
#include "exercises.hpp"

namespace ex32 {

// The save first, and whole: cuMemcpyDtoH returns when the bytes are in host memory. Only then the
// memory goes, mapping first (the handle alone would keep nothing mapped alive: lesson 14), and the
// reservation stays for the wake.
void sleepRegion(Region& region, void* saveTo) {
  if (!region.handle) return;
  CU_CHECK(cuMemUnmap(region.base, region.size));
  if (saveTo) CU_CHECK(cuMemcpyDtoH(saveTo, region.base, region.size));
  CU_CHECK(cuMemRelease(region.handle));
  region.handle = 0;
}

}  // namespace ex32
