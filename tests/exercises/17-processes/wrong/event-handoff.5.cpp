// Wrong (R1): waits for the event in the stream, then copies with the synchronous cuMemcpyDtoH
//
// "The stream waits for the producer, so any copy after the wait waits too." cuMemcpyDtoH is not
// in that stream: it runs in the legacy default stream, which does not wait for a non-blocking
// stream, so it copies the old value at once (`pendingWord == kUnread` and `stale == 0` fail).
#include "exercises.hpp"

namespace ex17 {

CUevent copyAfter(const CUipcEventHandle& produced, CUdeviceptr shared, void* host, std::size_t bytes, CUstream stream) {
  CUevent opened = nullptr;
  CU_CHECK(cuIpcOpenEventHandle(&opened, produced));
  const CUresult waited = cuStreamWaitEvent(stream, opened, 0);
  const CUresult copied = waited == CUDA_SUCCESS ? cuMemcpyDtoH(host, shared, bytes) : waited;
  if (copied != CUDA_SUCCESS) {
    cuEventDestroy(opened);
    CU_CHECK(copied);
  }
  return opened;
}

}  // namespace ex17
