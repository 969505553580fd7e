// Wrong (R2): caps the calculator's search at 256 threads, the usual block size
//
// "256 is the safe block size": blockSizeLimit = 256 keeps the calculator from the larger blocks,
// and the best block of stage is larger. On an H200 the best up to 256 keeps 1344 threads on an SM,
// against 1440 with blocks of 480: `threadsAt(chosen) == best` fails.
#include "exercises.hpp"

namespace ex16 {

namespace {

size_t CUDA_CB stageSharedBytes(int blockSize) {
  return static_cast<size_t>(blockSize) * kStageFloatsPerThread * sizeof(float);
}

}  // namespace

int chooseStageBlockSize(CUfunction stage) {
  int minGrid = 0, blockSize = 0;
  CU_CHECK(cuOccupancyMaxPotentialBlockSize(&minGrid, &blockSize, stage, stageSharedBytes, 0, 256));
  return blockSize;
}

}  // namespace ex16
