// Wrong (R1): enqueues the copy first and the wait for the producer's event after it
//
// "Both go into the same stream, so the copy is covered." A wait orders only what is enqueued
// after it: the copy runs at once and reads the old value (`stale == 0` fails).
#include "exercises.hpp"

namespace ex17 {

CUevent copyAfter(const CUipcEventHandle& produced, CUdeviceptr shared, void* host, std::size_t bytes, CUstream stream) {
  CUevent opened = nullptr;
  CU_CHECK(cuIpcOpenEventHandle(&opened, produced));
  const CUresult copied = cuMemcpyDtoHAsync(host, shared, bytes, stream);
  const CUresult waited = copied == CUDA_SUCCESS ? cuStreamWaitEvent(stream, opened, 0) : copied;
  if (waited != CUDA_SUCCESS) {
    cuEventDestroy(opened);
    CU_CHECK(waited);
  }
  return opened;
}

}  // namespace ex17
