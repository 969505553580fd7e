// Wrong (R2): records the event when another stream asks, not when the block is put
//
// The event then waits for everything the first stream queued since, too: while it stays busy the block is never handed over.
#include "exercises.hpp"

namespace ex30 {

// An event per block, recorded on its stream when it is freed: it completes once the work queued
// there before the free has run. PyTorch's insert_events does the same for each stream a block was
// used on.
void StreamCache::put(CUdeviceptr ptr, size_t size, CUstream stream) {
  CUevent freed = nullptr;
  CU_CHECK(cuEventCreate(&freed, CU_EVENT_DISABLE_TIMING));
  entries_.push_back({ptr, size, stream, freed});
}

// The smallest block that fits and may be used on stream: its own stream's at once (the stream's
// order puts the new work after the old), another's only when its event says that work is done.
// cuEventQuery never waits.
Cached StreamCache::take(size_t size, CUstream stream) {
  size_t best = entries_.size();
  for (size_t i = 0; i < entries_.size(); ++i) {
    const Entry& e = entries_[i];
    if (e.size < size || (best < entries_.size() && entries_[best].size <= e.size)) continue;
    if (e.stream != stream) {
      CU_CHECK(cuEventRecord(e.freed, e.stream));
      const CUresult done = cuEventQuery(e.freed);
      if (done == CUDA_ERROR_NOT_READY) continue;
      CU_CHECK(done);
    }
    best = i;
  }
  if (best == entries_.size()) return {};
  const Entry e = entries_[best];
  entries_.erase(entries_.begin() + static_cast<long>(best));
  cuEventDestroy(e.freed);
  return {e.ptr, e.size};
}

StreamCache::~StreamCache() {
  for (const Entry& e : entries_) cuEventDestroy(e.freed);
}

}  // namespace ex30
