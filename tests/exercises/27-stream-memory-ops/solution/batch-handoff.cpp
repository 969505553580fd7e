// Reference solution of lesson 27's exercise batch-handoff (lessons/27-stream-memory-ops/exercises.cpp).
#include "exercises.hpp"

namespace ex27 {

// The operations run in the order of the array: the wait first, then the 64-bit write.
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
  CU_CHECK(cuStreamBatchMemOp(stream, 2, ops, 0));
}

}  // namespace ex27
