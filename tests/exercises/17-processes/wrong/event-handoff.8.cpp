// Wrong (R5): pushes the stream's context for the open and pops it only when something fails
//
// "An interprocess event opens in the current context, so make the stream's context current
// first, to be sure." The pop went into the failure branch, where the clean-up is, and not onto
// the way out: every successful handoff leaves one more context on the caller's stack. In the
// check `stackKept` fails.
#include "exercises.hpp"

namespace ex17 {

// The opened event behaves like a local event created with CU_EVENT_DISABLE_TIMING; a wait on it
// takes the producer's most recent record, made before the handle was sent. The wait and the copy
// are both enqueued in stream, so the host waits for nothing here: the stream does. Whatever fails
// after the open gives the event back before the error goes on.
CUevent copyAfter(const CUipcEventHandle& produced, CUdeviceptr shared, void* host, std::size_t bytes, CUstream stream) {
  CUcontext ctx = nullptr;
  CU_CHECK(cuStreamGetCtx(stream, &ctx));
  CU_CHECK(cuCtxPushCurrent(ctx));
  CUevent opened = nullptr;
  CU_CHECK(cuIpcOpenEventHandle(&opened, produced));
  const CUresult waited = cuStreamWaitEvent(stream, opened, 0);
  const CUresult copied = waited == CUDA_SUCCESS ? cuMemcpyDtoHAsync(host, shared, bytes, stream) : waited;
  if (copied != CUDA_SUCCESS) {
    cuEventDestroy(opened);
    cuCtxPopCurrent(&ctx);
    CU_CHECK(copied);
  }
  return opened;
}

}  // namespace ex17
