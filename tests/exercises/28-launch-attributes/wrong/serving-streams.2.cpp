// Wrong (R1): the greatest priority typed in as -1
//
// -1 was the greatest priority of many older GPUs; an H200 reported -5 (driver 580). Within the range -1 is
// a priority like any other, and not the greatest: the latency stream ranks below what the device offers.
#include "exercises.hpp"

namespace ex28 {

// Lower numbers are higher priorities: the greatest is the range's lowest number. The latency
// stream is destroyed again if the batch stream cannot be made.
ServingStreams createServingStreams() {
  int least = 0, greatest = 0;  // greatest assumed -1 below
  CU_CHECK(cuCtxGetStreamPriorityRange(&least, &greatest));
  ServingStreams s;
  CU_CHECK(cuStreamCreateWithPriority(&s.latency, CU_STREAM_NON_BLOCKING, -1));
  const CUresult rc = cuStreamCreateWithPriority(&s.batch, CU_STREAM_NON_BLOCKING, least);
  if (rc != CUDA_SUCCESS) {
    cuStreamDestroy(s.latency);
    wb::throwDriverError(rc, "cuStreamCreateWithPriority(batch)", __FILE__, __LINE__);
  }
  return s;
}

}  // namespace ex28
