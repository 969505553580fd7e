// Wrong (R1): passes the shared memory of one thread as the calculator's constant dynamicSMemSize
//
// "The calculator takes the shared memory as a number": the calculator then counts 160 bytes per
// block at every size and suggests the largest block. With the shared memory that block really
// needs, an SM holds fewer threads of stage than with a smaller block: `threadsAt(chosen) == best`
// fails (on an H200: 1024 threads against 1440 with blocks of 480).
#include "exercises.hpp"

namespace ex16 {

namespace {

size_t CUDA_CB stageSharedBytes(int blockSize) {
  return static_cast<size_t>(blockSize) * kStageFloatsPerThread * sizeof(float);
}

}  // namespace

int chooseStageBlockSize(CUfunction stage) {
  int minGrid = 0, blockSize = 0;
  (void)stageSharedBytes;
  CU_CHECK(cuOccupancyMaxPotentialBlockSize(&minGrid, &blockSize, stage, nullptr,
                                            kStageFloatsPerThread * sizeof(float), 0));
  return blockSize;
}

}  // namespace ex16
