// Wrong (R5): returns quietly when the context cannot be made, "the probe simply does not run then"
//
// The caller cannot tell a probe that found nothing from one that never ran: the check refuses
// cuCtxCreate and `thrown == CUDA_ERROR_OUT_OF_MEMORY` fails.
#include "exercises.hpp"

namespace ex03 {

namespace {

// Destroys at scope exit. cuCtxDestroy also pops the context where it is current, which gives the
// caller's stack back as it was.
struct DestroyAtExit {
  CUcontext ctx;
  ~DestroyAtExit() { cuCtxDestroy(ctx); }
};

}  // namespace

void withPrivateContext(CUdevice dev, const std::function<void()>& work) {
  CUcontext ctx = nullptr;
  if (wb::createContext(&ctx, 0, dev) != CUDA_SUCCESS) return;
  DestroyAtExit destroy{ctx};
  work();
}

}  // namespace ex03
