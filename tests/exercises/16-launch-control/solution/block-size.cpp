// Reference solution of lesson 16's exercise block-size (lessons/16-launch-control/exercises.cpp).
#include "exercises.hpp"

namespace ex16 {

namespace {

// The calculator tries block sizes itself and asks this function what each needs; it passes no
// user data, so what the function needs is a constant (or a variable it can see).
size_t CUDA_CB stageSharedBytes(int blockSize) {
  return static_cast<size_t>(blockSize) * kStageFloatsPerThread * sizeof(float);
}

}  // namespace

int chooseStageBlockSize(CUfunction stage) {
  int minGrid = 0, blockSize = 0;
  CU_CHECK(cuOccupancyMaxPotentialBlockSize(&minGrid, &blockSize, stage, stageSharedBytes, 0, 0));
  return blockSize;
}

}  // namespace ex16
