// The exercises of lesson 16 (launch control): their tasks are in exercises.cpp beside this file,
// their checks in tests/exercises/exercise16_launch_control.cpp.
#pragma once

#include "workbook.hpp"

#include <cstddef>

namespace ex16 {

// Exercise 1: launches f with sharedBytes of dynamic shared memory per block in stream, without
// waiting, raising f's CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES only when the launch needs
// more than it allows; throws std::length_error, changing nothing and launching nothing, when the
// device can never give f that much.
void launchWithSharedMemory(CUfunction f, unsigned blocks, unsigned threads, size_t sharedBytes, void** args,
                            CUstream stream);

// The stage kernel of kernels/launch_control.cu keeps this many floats per thread in dynamic shared
// memory: a block of n threads needs n * kStageFloatsPerThread * 4 bytes.
constexpr unsigned kStageFloatsPerThread = 40;

// Exercise 2: the block size at which an SM holds the most threads of stage, each block with the
// dynamic shared memory its size needs.
int chooseStageBlockSize(CUfunction stage);

#if CUDA_VERSION >= 12040  // green contexts: CUDA 12.4
// Exercise 3: the device split into a latency partition and a throughput partition of SMs, each a
// green context with a non-blocking stream of its own.
class Partitions {
 public:
  // The latency partition: one group of at least latencySms SMs of dev; the throughput partition:
  // the SMs no group took. Then a non-blocking stream in each. When a call fails, throws with
  // nothing held; the caller's context stack is left as it was.
  Partitions(CUdevice dev, unsigned latencySms);
  // Destroys the streams, then the green contexts.
  ~Partitions();
  Partitions(const Partitions&) = delete;
  Partitions& operator=(const Partitions&) = delete;

  CUgreenCtx latency() const { return latency_; }
  CUgreenCtx throughput() const { return throughput_; }
  CUstream latencyStream() const { return latencyStream_; }
  CUstream throughputStream() const { return throughputStream_; }

 private:
  CUgreenCtx latency_ = nullptr, throughput_ = nullptr;
  CUstream latencyStream_ = nullptr, throughputStream_ = nullptr;
};
#endif

}  // namespace ex16
