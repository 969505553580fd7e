// Wrong (R3): two calls, cuStreamWaitValue32 then cuStreamWriteValue64
//
// Right in effect, but two API calls where the task asks for one batch.
#include "exercises.hpp"

namespace ex27 {

void handoff(CUstream stream, CUdeviceptr ready, cuuint32_t readySeq, CUdeviceptr done, cuuint64_t doneSeq) {
  CU_CHECK(cuStreamWaitValue32(stream, ready, readySeq, CU_STREAM_WAIT_VALUE_GEQ));
  CU_CHECK(cuStreamWriteValue64(stream, done, doneSeq, CU_STREAM_WRITE_VALUE_DEFAULT));
}

}  // namespace ex27
