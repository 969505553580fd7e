// The CUDA 12.x call cuCtxCreate(&ctx, flags, dev). From CUDA 13.0 cuCtxCreate takes a
// CUctxCreateParams* before the flags, so this must NOT compile there; with 12.x it must.
// ctest common.cuctxcreate-three-args builds it and expects the outcome for this toolkit.
#include <cuda.h>

int main() {
  CUcontext ctx = nullptr;
  return static_cast<int>(cuCtxCreate(&ctx, 0u, 0));
}
