// The exercises of lesson 18 (peers): their tasks are in exercises.cpp beside this file, their
// checks in tests/exercises/exercise18_multi_gpu.cpp.
#pragma once

#include "workbook.hpp"

#include <cstddef>
#include <vector>

namespace ex18 {

// Exercise 1: copies bytes from src (memory of srcCtx's device) to dst (memory of dstCtx's device):
// in stream order in stream where both contexts are on one device, or over the link where the two
// devices can access each other both ways; staged through pinned host memory otherwise. Leaves the
// calling thread's context stack as it found it.
void copyAcross(CUdeviceptr dst, CUcontext dstCtx, CUdeviceptr src, CUcontext srcCtx, std::size_t bytes,
                CUstream stream);

// An ordered pair of indexes into the contexts given to enableAllPeers: contexts[from] may not
// access the memory of contexts[to].
struct PeerPair {
  int from = 0, to = 0;
  bool operator==(const PeerPair& o) const { return from == o.from && to == o.to; }
};

// Exercise 2: enables peer access from every context to every other one whose device it can
// access; returns the ordered pairs it cannot. Calling it again changes nothing and throws nothing.
std::vector<PeerPair> enableAllPeers(const std::vector<CUcontext>& contexts);

// Exercise 3: copies between two device memories through two pinned staging buffers, the copy up
// of one chunk overlapping the copy down of the next.
class StagedCopier {
 public:
  // Two staging buffers of chunkBytes each, pinned for every context.
  explicit StagedCopier(std::size_t chunkBytes);
  // Frees them.
  ~StagedCopier();
  StagedCopier(const StagedCopier&) = delete;
  StagedCopier& operator=(const StagedCopier&) = delete;
  // Copies bytes from src (memory of srcCtx's device) to dst (memory of dstCtx's device); returns
  // once they have all arrived. The two contexts may be the same. Leaves the current context as it
  // found it.
  void copy(CUdeviceptr dst, CUcontext dstCtx, CUdeviceptr src, CUcontext srcCtx, std::size_t bytes);
  // Staging buffer k (0 or 1), for the check to look at what was allocated.
  void* stagingBuffer(int k) const { return staging_[k]; }

 private:
  std::size_t chunkBytes_ = 0;
  void* staging_[2] = {nullptr, nullptr};  // pinned host memory, chunkBytes_ each
};

}  // namespace ex18
