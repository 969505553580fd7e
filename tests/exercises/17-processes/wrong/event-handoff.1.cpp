// Wrong (R1): copies without waiting for the producer's event in the stream
//
// "The producer recorded its event before it sent the handle, so by the time the consumer has the
// handle the batch is ready." Recorded is not completed: the copy runs at once, while the
// producer's gate still holds the write, and copies the old value (`stale == 0` and
// `fresh == words` fail; `waitFired` too: cuStreamWaitEvent is never called).
#include "exercises.hpp"

namespace ex17 {

CUevent copyAfter(const CUipcEventHandle& produced, CUdeviceptr shared, void* host, std::size_t bytes, CUstream stream) {
  CUevent opened = nullptr;
  CU_CHECK(cuIpcOpenEventHandle(&opened, produced));
  const CUresult copied = cuMemcpyDtoHAsync(host, shared, bytes, stream);
  if (copied != CUDA_SUCCESS) {
    cuEventDestroy(opened);
    CU_CHECK(copied);
  }
  return opened;
}

}  // namespace ex17
