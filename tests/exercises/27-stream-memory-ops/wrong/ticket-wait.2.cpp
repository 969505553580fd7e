// Wrong (R1): waits with AND, as if the ticket were a bit mask
//
// (*flag & ticket) != 0 holds for a flag of 2 and a ticket of 6: the kernel runs before its ticket.
#include "exercises.hpp"

namespace ex27 {

void holdUntil(CUstream stream, CUdeviceptr flag, cuuint32_t ticket) {
  CU_CHECK(cuStreamWaitValue32(stream, flag, ticket, CU_STREAM_WAIT_VALUE_AND));
}

}  // namespace ex27
