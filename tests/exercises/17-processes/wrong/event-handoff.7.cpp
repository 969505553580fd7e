// Wrong (R3): opens the event twice, one for the stream's wait and one to hand to the caller
//
// "The caller destroys the event it gets, and destroying an event the stream still waits on looks
// unsafe, so the wait gets one of its own." The wait holds what it needs (a wait takes the event's
// state when it is enqueued), and the first handle is never destroyed: one event leaks per batch.
// In the check the process holds two events more after copyAfter, and `heldAfter == "1 event more"`
// and `heldAtEnd == ""` fail.
#include "exercises.hpp"

namespace ex17 {

// The opened event behaves like a local event created with CU_EVENT_DISABLE_TIMING; a wait on it
// takes the producer's most recent record, made before the handle was sent. The wait and the copy
// are both enqueued in stream, so the host waits for nothing here: the stream does. Whatever fails
// after the open gives the event back before the error goes on.
CUevent copyAfter(const CUipcEventHandle& produced, CUdeviceptr shared, void* host, std::size_t bytes, CUstream stream) {
  CUevent forWait = nullptr, opened = nullptr;
  CU_CHECK(cuIpcOpenEventHandle(&forWait, produced));
  CU_CHECK(cuIpcOpenEventHandle(&opened, produced));
  const CUresult waited = cuStreamWaitEvent(stream, forWait, 0);
  const CUresult copied = waited == CUDA_SUCCESS ? cuMemcpyDtoHAsync(host, shared, bytes, stream) : waited;
  if (copied != CUDA_SUCCESS) {
    cuEventDestroy(opened);
    CU_CHECK(copied);
  }
  return opened;
}

}  // namespace ex17
