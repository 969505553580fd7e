// Wrong (R1): allocates in whatever context is current, "the caller has set up the right context"
//
// A fresh thread has none: cuMemAlloc fails with CUDA_ERROR_INVALID_CONTEXT and the four threads'
// errors are thrown in the check. Where the caller's own context is current, the memory lands in
// it, not in the primary context the runtime shares.
#include "exercises.hpp"

namespace ex04 {

CUdeviceptr allocateInPrimary(CUdevice dev, size_t bytes) {
  (void)dev;
  CUdeviceptr p = 0;
  CU_CHECK(cuMemAlloc(&p, bytes));
  return p;
}

}  // namespace ex04
