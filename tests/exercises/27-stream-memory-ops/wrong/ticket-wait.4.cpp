// Wrong (R3): waits on the host for the stream after enqueuing the wait
//
// "To be sure it took effect": the caller's thread now waits for the proxy, which is what the stream
// operation was there to avoid (and would wait for ever if the proxy's thread were the caller's).
#include "exercises.hpp"

namespace ex27 {

void holdUntil(CUstream stream, CUdeviceptr flag, cuuint32_t ticket) {
  CU_CHECK(cuStreamWaitValue32(stream, flag, ticket, CU_STREAM_WAIT_VALUE_GEQ));
  CU_CHECK(cuStreamSynchronize(stream));
}

}  // namespace ex27
