// Wrong (R4): ignores what cuStreamBatchMemOp returned
//
// A refused batch publishes nothing and waits for nothing, and the caller is not told.
#include "exercises.hpp"

namespace ex27 {

void handoff(CUstream stream, CUdeviceptr ready, cuuint32_t readySeq, CUdeviceptr done, cuuint64_t doneSeq) {
  CUstreamBatchMemOpParams ops[2] = {};
  ops[0].waitValue.operation = CU_STREAM_MEM_OP_WAIT_VALUE_32;
  ops[0].waitValue.address = ready;
  ops[0].waitValue.value = readySeq;
  ops[0].waitValue.flags = CU_STREAM_WAIT_VALUE_GEQ;
  ops[1].writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_64;
  ops[1].writeValue.address = done;
  ops[1].writeValue.value64 = doneSeq;
  ops[1].writeValue.flags = CU_STREAM_WRITE_VALUE_DEFAULT;
  (void)cuStreamBatchMemOp(stream, 2, ops, 0);
}

}  // namespace ex27
