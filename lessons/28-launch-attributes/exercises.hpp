// The exercises of lesson 28 (the launch attributes engines set): their tasks are in exercises.cpp
// beside this file, their checks in tests/exercises/exercise28_launch_attributes.cpp.
#pragma once

#include "workbook.hpp"

#include <cstddef>

namespace ex28 {

// Exercise 1: a serving engine's two streams in the current context: one for latency-critical
// kernels at the greatest priority, one for batch work at the least.
struct ServingStreams {
  CUstream latency = nullptr, batch = nullptr;
};
ServingStreams createServingStreams();

// Exercise 2: keeps [hot, hot + bytes) in L2 for stream's later kernels as far as the device lets
// it: the persisting set-aside and the stream's access policy window. Returns the set-aside the
// context reports.
size_t persistHot(CUstream stream, CUdeviceptr hot, size_t bytes);

// Exercise 3: launches f (blocks x threads, 1-D, the arguments args) in stream so that `started`
// fires once every block of it has begun, not when it ends.
void launchSignallingStart(CUfunction f, unsigned blocks, unsigned threads, void** args, CUstream stream,
                           CUevent started);

}  // namespace ex28
