// Wrong (R1): the per-block function counts floats, not bytes (blockSize * kStageFloatsPerThread)
//
// "40 per thread, so blockSize * 40": the calculator believes each block needs a quarter of its real
// shared memory, and suggests a block that, with all of it, leaves an SM emptier than the best
// size: `threadsAt(chosen) == best` fails (on an H200 it suggests 1024 threads: 1024 per SM against 1440).
#include "exercises.hpp"

namespace ex16 {

namespace {

size_t CUDA_CB stageSharedBytes(int blockSize) {
  return static_cast<size_t>(blockSize) * kStageFloatsPerThread;
}

}  // namespace

int chooseStageBlockSize(CUfunction stage) {
  int minGrid = 0, blockSize = 0;
  CU_CHECK(cuOccupancyMaxPotentialBlockSize(&minGrid, &blockSize, stage, stageSharedBytes, 0, 0));
  return blockSize;
}

}  // namespace ex16
