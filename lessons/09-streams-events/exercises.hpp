// The exercises of lesson 09 (streams and events): their tasks are in exercises.cpp beside this
// file, their checks in tests/exercises/exercise09_streams_events.cpp.
#pragma once

#include "workbook.hpp"

#include <cstddef>
#include <vector>

namespace ex09 {

// The launch shape of burn in pipeline(): the check measures its reference with the same one.
constexpr unsigned kBurnBlocks = 264, kBurnThreads = 256;

// Exercise 1: copies n floats from pinned host to device in chunks in `copies`, burning each chunk in `compute` once it has arrived; only enqueues.
void pipeline(CUfunction burn, const float* host, CUdeviceptr device, unsigned n, unsigned chunks, unsigned rounds,
              CUstream copies, CUstream compute);

// Exercise 2: loads every kernel of library into the current context now, so that no later launch there has to.
void preloadKernels(CUlibrary library);

// Exercise 3: uploads through a ring of pinned staging buffers, reusing one only after the copy that reads it has run.
class StagingRing {
 public:
  // buffers staging buffers of bytesEach bytes each, in pinned host memory, with an event each, made
  // here once; 0 buffers or 0 bytes: std::invalid_argument.
  StagingRing(unsigned buffers, std::size_t bytesEach);
  // Frees them, once no copy can still read them.
  ~StagingRing();
  StagingRing(const StagingRing&) = delete;
  StagingRing& operator=(const StagingRing&) = delete;
  // Copies bytes (at most bytesEach, else std::invalid_argument) from src into the next staging
  // buffer and enqueues its copy to dst in stream; returns false, doing nothing, while that buffer's
  // last copy has not run.
  bool tryUpload(const void* src, std::size_t bytes, CUdeviceptr dst, CUstream stream);

 private:
  struct Slot {
    void* host = nullptr;      // pinned, bytesEach_ bytes
    CUevent copied = nullptr;  // recorded in the stream right after the copy that reads host
    bool used = false;         // whether copied has been recorded at all
  };
  std::vector<Slot> slots_;
  std::size_t bytesEach_ = 0;
  std::size_t next_ = 0;  // the slot the next upload takes: the ring's oldest
};

}  // namespace ex09
