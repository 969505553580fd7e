// Wrong (R4): the latency stream leaks when the batch stream cannot be made
//
// CU_CHECK throws at the second failure, and the first stream is never destroyed.
#include "exercises.hpp"

namespace ex28 {

// Lower numbers are higher priorities: the greatest is the range's lowest number. The latency
// stream is destroyed again if the batch stream cannot be made.
ServingStreams createServingStreams() {
  int least = 0, greatest = 0;
  CU_CHECK(cuCtxGetStreamPriorityRange(&least, &greatest));
  ServingStreams s;
  CU_CHECK(cuStreamCreateWithPriority(&s.latency, CU_STREAM_NON_BLOCKING, greatest));
  CU_CHECK(cuStreamCreateWithPriority(&s.batch, CU_STREAM_NON_BLOCKING, least));
  return s;
}

}  // namespace ex28
