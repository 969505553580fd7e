// Wrong (R4): ignores what cuStreamWaitValue32 returned
//
// A refused wait leaves the stream unguarded: its kernel reads a transfer that has not arrived, and
// nobody is told.
#include "exercises.hpp"

namespace ex27 {

void holdUntil(CUstream stream, CUdeviceptr flag, cuuint32_t ticket) {
  (void)cuStreamWaitValue32(stream, flag, ticket, CU_STREAM_WAIT_VALUE_GEQ);
}

}  // namespace ex27
