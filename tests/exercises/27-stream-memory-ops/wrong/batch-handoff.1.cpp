// Wrong (R1): puts the write first in the array, the wait after it
//
// The batch runs in its array's order: done is published before ready has come.
#include "exercises.hpp"

namespace ex27 {

void handoff(CUstream stream, CUdeviceptr ready, cuuint32_t readySeq, CUdeviceptr done, cuuint64_t doneSeq) {
  CUstreamBatchMemOpParams ops[2] = {};
  ops[1].waitValue.operation = CU_STREAM_MEM_OP_WAIT_VALUE_32;
  ops[1].waitValue.address = ready;
  ops[1].waitValue.value = readySeq;
  ops[1].waitValue.flags = CU_STREAM_WAIT_VALUE_GEQ;
  ops[0].writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_64;
  ops[0].writeValue.address = done;
  ops[0].writeValue.value64 = doneSeq;
  ops[0].writeValue.flags = CU_STREAM_WRITE_VALUE_DEFAULT;
  CU_CHECK(cuStreamBatchMemOp(stream, 2, ops, 0));
}

}  // namespace ex27
