// Wrong (R2): rounds the calculator's block size down to a power of two
//
// "Block sizes should be powers of two": any whole number of warps is a valid block, and the best
// one here is not a power of two. On an H200 the calculator names 480 (3 blocks per SM, 1440
// threads); 256 keeps 1280: `threadsAt(chosen) == best` fails.
#include "exercises.hpp"

namespace ex16 {

namespace {

size_t CUDA_CB stageSharedBytes(int blockSize) {
  return static_cast<size_t>(blockSize) * kStageFloatsPerThread * sizeof(float);
}

}  // namespace

int chooseStageBlockSize(CUfunction stage) {
  int minGrid = 0, blockSize = 0;
  CU_CHECK(cuOccupancyMaxPotentialBlockSize(&minGrid, &blockSize, stage, stageSharedBytes, 0, 0));
  int power = 1;
  while (power * 2 <= blockSize) power *= 2;
  return power;
}

}  // namespace ex16
