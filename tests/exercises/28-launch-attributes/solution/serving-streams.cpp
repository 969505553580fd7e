// Reference solution of lesson 28's exercise serving-streams (lessons/28-launch-attributes/exercises.cpp).
#include "exercises.hpp"

namespace ex28 {

// Lower numbers are higher priorities: the greatest is the range's lowest number. The latency
// stream is destroyed again if the batch stream cannot be made.
ServingStreams createServingStreams() {
  int least = 0, greatest = 0;
  CU_CHECK(cuCtxGetStreamPriorityRange(&least, &greatest));
  ServingStreams s;
  CU_CHECK(cuStreamCreateWithPriority(&s.latency, CU_STREAM_NON_BLOCKING, greatest));
  const CUresult rc = cuStreamCreateWithPriority(&s.batch, CU_STREAM_NON_BLOCKING, least);
  if (rc != CUDA_SUCCESS) {
    cuStreamDestroy(s.latency);
    wb::throwDriverError(rc, "cuStreamCreateWithPriority(batch)", __FILE__, __LINE__);
  }
  return s;
}

}  // namespace ex28
