// Bridges for Driver API differences between CUDA 12.x and 13.x, so one source builds with both.
#pragma once

#include <cuda.h>

namespace wb {

// cuCtxCreate changed shape in CUDA 13.0. Up to 12.x the default cuCtxCreate is
//   cuCtxCreate(CUcontext*, unsigned flags, CUdevice)            (cuCtxCreate_v2)
// From 13.0 the name maps to cuCtxCreate_v4, which takes creation parameters first:
//   cuCtxCreate(CUcontext*, CUctxCreateParams*, unsigned flags, CUdevice)
// and the three-argument call no longer compiles. A null CUctxCreateParams* asks for neither
// execution affinity nor CIG mode, which is what the three-argument form always meant.
//! [create-context]
inline CUresult createContext(CUcontext* ctx, unsigned int flags, CUdevice dev) {
#if CUDA_VERSION >= 13000
  return cuCtxCreate(ctx, nullptr, flags, dev);
#else
  return cuCtxCreate(ctx, flags, dev);
#endif
}
//! [create-context]

}  // namespace wb
