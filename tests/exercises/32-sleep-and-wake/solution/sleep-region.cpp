// Reference solution of lesson 32's exercise sleep-region (lessons/32-sleep-and-wake/exercises.cpp).
#include "exercises.hpp"

namespace ex32 {

// The save first, and whole: cuMemcpyDtoH returns when the bytes are in host memory. Only then the
// memory goes, mapping first (the handle alone would keep nothing mapped alive: lesson 14), and the
// reservation stays for the wake.
void sleepRegion(Region& region, void* saveTo) {
  if (!region.handle) return;
  if (saveTo) CU_CHECK(cuMemcpyDtoH(saveTo, region.base, region.size));
  CU_CHECK(cuMemUnmap(region.base, region.size));
  CU_CHECK(cuMemRelease(region.handle));
  region.handle = 0;
}

}  // namespace ex32
