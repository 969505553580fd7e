// Wrong (R1): waits for the transfer before the ticket (ticket - 1)
//
// An off-by-one between "transfers finished" and "the transfer's number": with the flag one below
// the ticket the kernel already runs.
#include "exercises.hpp"

namespace ex27 {

void holdUntil(CUstream stream, CUdeviceptr flag, cuuint32_t ticket) {
  CU_CHECK(cuStreamWaitValue32(stream, flag, ticket - 1, CU_STREAM_WAIT_VALUE_GEQ));
}

}  // namespace ex27
