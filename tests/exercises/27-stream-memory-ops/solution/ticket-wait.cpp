// Reference solution of lesson 27's exercise ticket-wait (lessons/27-stream-memory-ops/exercises.cpp).
#include "exercises.hpp"

namespace ex27 {

// GEQ is the cyclic comparison the task asks for: (int32_t)(*flag - ticket) >= 0 holds for the ticket
// and for every count past it, also across the wrap. The call only enqueues the wait.
void holdUntil(CUstream stream, CUdeviceptr flag, cuuint32_t ticket) {
  CU_CHECK(cuStreamWaitValue32(stream, flag, ticket, CU_STREAM_WAIT_VALUE_GEQ));
}

}  // namespace ex27
