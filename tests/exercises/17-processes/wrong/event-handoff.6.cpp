// Wrong (R4): copies at once and returns no event when the producer's event cannot be opened
//
// "If the event cannot be opened, the producer has gone and its last batch is all there is: copy
// it without a wait." An open that fails is an error (a corrupt handle, a context that faulted),
// and the copy then reads a buffer the producer may still be writing. In the check
// cuIpcOpenEventHandle is made to fail once: copyAfter returns, and `openFailedThrew` fails.
#include "exercises.hpp"

namespace ex17 {

// The opened event behaves like a local event created with CU_EVENT_DISABLE_TIMING; a wait on it
// takes the producer's most recent record, made before the handle was sent. The wait and the copy
// are both enqueued in stream, so the host waits for nothing here: the stream does. Whatever fails
// after the open gives the event back before the error goes on.
CUevent copyAfter(const CUipcEventHandle& produced, CUdeviceptr shared, void* host, std::size_t bytes, CUstream stream) {
  CUevent opened = nullptr;
  if (cuIpcOpenEventHandle(&opened, produced) != CUDA_SUCCESS) {
    CU_CHECK(cuMemcpyDtoHAsync(host, shared, bytes, stream));
    return nullptr;  // "nothing to wait for, nothing to destroy"
  }
  const CUresult waited = cuStreamWaitEvent(stream, opened, 0);
  const CUresult copied = waited == CUDA_SUCCESS ? cuMemcpyDtoHAsync(host, shared, bytes, stream) : waited;
  if (copied != CUDA_SUCCESS) {
    cuEventDestroy(opened);
    CU_CHECK(copied);
  }
  return opened;
}

}  // namespace ex17
