// Wrong (R3): streams created with flags 0 (CU_STREAM_DEFAULT)
//
// Blocking streams wait for the legacy stream and it for them: a library's cuMemcpy in the legacy
// stream would hold the latency stream up.
#include "exercises.hpp"

namespace ex28 {

// Lower numbers are higher priorities: the greatest is the range's lowest number. The latency
// stream is destroyed again if the batch stream cannot be made.
ServingStreams createServingStreams() {
  int least = 0, greatest = 0;
  CU_CHECK(cuCtxGetStreamPriorityRange(&least, &greatest));
  ServingStreams s;
  CU_CHECK(cuStreamCreateWithPriority(&s.latency, CU_STREAM_DEFAULT, greatest));
  const CUresult rc = cuStreamCreateWithPriority(&s.batch, CU_STREAM_DEFAULT, least);
  if (rc != CUDA_SUCCESS) {
    cuStreamDestroy(s.latency);
    wb::throwDriverError(rc, "cuStreamCreateWithPriority(batch)", __FILE__, __LINE__);
  }
  return s;
}

}  // namespace ex28
