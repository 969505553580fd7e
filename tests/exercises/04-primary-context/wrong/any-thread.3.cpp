// Wrong (R3): keeps its retain, "the memory must not outlive its context"
//
// The caller already holds a retain for as long as it uses the memory. This one is never given back:
// after the caller's release the primary context stays active for ever, with all its memory, and
// `leaked == 0` fails (the ledger shows the retains kept too).
#include "exercises.hpp"

namespace ex04 {

CUdeviceptr allocateInPrimary(CUdevice dev, size_t bytes) {
  CUcontext primary = nullptr;
  CU_CHECK(cuDevicePrimaryCtxRetain(&primary, dev));
  CUdeviceptr p = 0;
  CUresult rc = cuCtxPushCurrent(primary);
  if (rc == CUDA_SUCCESS) {
    rc = cuMemAlloc(&p, bytes);
    CUcontext popped = nullptr;
    cuCtxPopCurrent(&popped);  // back to the caller's stack, whether the allocation worked or not
  }
  CU_CHECK(rc);
  return p;
}

}  // namespace ex04
