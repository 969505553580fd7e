// Wrong (R2): waits for the producer's event on the host (cuEventSynchronize), then enqueues the copy
//
// "Make sure the producer is done, then copy." Correct bytes, but the consumer's thread stops until
// another process's work is done, which the task forbids: in the check the producer opens its gate
// only after copyAfter has returned, so copyAfter waits until the gate gives up (5 s), and
// `gateSeen.v[0] == wb::Gate::Waiting` and `pending == CUDA_ERROR_NOT_READY` fail.
#include "exercises.hpp"

namespace ex17 {

CUevent copyAfter(const CUipcEventHandle& produced, CUdeviceptr shared, void* host, std::size_t bytes, CUstream stream) {
  CUevent opened = nullptr;
  CU_CHECK(cuIpcOpenEventHandle(&opened, produced));
  CUresult rc = cuEventSynchronize(opened);
  if (rc == CUDA_SUCCESS) rc = cuMemcpyDtoHAsync(host, shared, bytes, stream);
  if (rc != CUDA_SUCCESS) {
    cuEventDestroy(opened);
    CU_CHECK(rc);
  }
  return opened;
}

}  // namespace ex17
