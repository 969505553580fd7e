// Wrong (R4): checks every call with CU_CHECK, so a failed wait or copy throws with the event still open
//
// "CU_CHECK reports every error." It does, and leaves the opened event behind each time: a consumer
// that fails a handoff now and then leaks one event per failure. `heldAfterFailedWait == ""` fails
// ("1 event more").
#include "exercises.hpp"

namespace ex17 {

CUevent copyAfter(const CUipcEventHandle& produced, CUdeviceptr shared, void* host, std::size_t bytes, CUstream stream) {
  CUevent opened = nullptr;
  CU_CHECK(cuIpcOpenEventHandle(&opened, produced));
  CU_CHECK(cuStreamWaitEvent(stream, opened, 0));
  CU_CHECK(cuMemcpyDtoHAsync(host, shared, bytes, stream));
  return opened;
}

}  // namespace ex17
