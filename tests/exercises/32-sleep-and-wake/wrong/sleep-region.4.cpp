// Wrong (R4): releases the memory even when the save failed, then reports the error: the weights are lost
#include "exercises.hpp"

namespace ex32 {

// The save first, and whole: cuMemcpyDtoH returns when the bytes are in host memory. Only then the
// memory goes, mapping first (the handle alone would keep nothing mapped alive: lesson 14), and the
// reservation stays for the wake.
void sleepRegion(Region& region, void* saveTo) {
  if (!region.handle) return;
  const CUresult saved = saveTo ? cuMemcpyDtoH(saveTo, region.base, region.size) : CUDA_SUCCESS;
  CU_CHECK(cuMemUnmap(region.base, region.size));
  CU_CHECK(cuMemRelease(region.handle));
  region.handle = 0;
  CU_CHECK(saved);
}

}  // namespace ex32
