// Wrong (R2): waits with EQ, for the ticket exactly
//
// A proxy that finishes two transfers at once skips the ticket's number, and the stream then waits
// for ever: with the flag 4 past the ticket the stamp never runs.
#include "exercises.hpp"

namespace ex27 {

void holdUntil(CUstream stream, CUdeviceptr flag, cuuint32_t ticket) {
  CU_CHECK(cuStreamWaitValue32(stream, flag, ticket, CU_STREAM_WAIT_VALUE_EQ));
}

}  // namespace ex27
