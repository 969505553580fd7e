// The exercises of lesson 26 (checkpoint and restore): their tasks are in exercises.cpp beside this
// file, their checks in tests/exercises/exercise26_checkpoint.cpp. The declarations use no type of
// CUDA 12.8's checkpoint calls, so that this header compiles with every CUDA 12.x.
#pragma once

#include "workbook.hpp"

#include <vector>

namespace ex26 {

// Exercise 1: suspends the GPU state of process pid (checkpointed on return: true), or gives up
// when it cannot be locked within timeoutMs (still running: false); and brings it back.
bool suspendGpu(int pid, unsigned timeoutMs);
void resumeGpu(int pid);

// Exercise 2: restores the checkpointed process pid with what was on device i (an ordinal of this
// process) moved to device target[i], and unlocks it.
void restoreOnto(int pid, const std::vector<int>& target);

// Exercise 3: suspends every process of pids, or none of them: true when all are checkpointed,
// false when one could not be locked within timeoutMs (then all run on as they were).
bool suspendAll(const std::vector<int>& pids, unsigned timeoutMs);

}  // namespace ex26
