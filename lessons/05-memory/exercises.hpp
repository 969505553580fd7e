// The exercises of lesson 05 (memory): their tasks are in exercises.cpp beside this file, their
// checks in tests/exercises/exercise05_memory.cpp.
#pragma once

#include "workbook.hpp"

#include <cstddef>
#include <vector>

namespace ex05 {

// Exercise 1: uploads pageable host data through pinned staging buffers, returning before each copy has run.
class StagingUploader {
 public:
  StagingUploader() = default;
  ~StagingUploader();  // waits for the copies still reading its buffers, then frees them
  StagingUploader(const StagingUploader&) = delete;
  StagingUploader& operator=(const StagingUploader&) = delete;
  // Enqueues a copy of bytes from src to dst in stream; src may be reused as soon as this returns.
  void upload(CUdeviceptr dst, const void* src, size_t bytes, CUstream stream);
  // Makes sure that at least count staging buffers of at least bytes each are held, allocating before a burst.
  void reserve(size_t count, size_t bytes);
  // How many pinned staging buffers it holds now.
  size_t stagingBuffers() const;

  // One staging buffer: pinned memory, and the event that says when the copy reading it has run.
  struct Staging {
    void* host = nullptr;      // pinned, from cuMemAllocHost
    size_t bytes = 0;          // its size
    CUevent copied = nullptr;  // recorded after the copy that reads it: done means free again
  };

 private:
  std::vector<Staging> staging_;
};

// Exercise 2: sets count elements of elementSize bytes (1, 2, 4 or 8) from dst on to the bytes at value, without a kernel.
void fillElements(CUdeviceptr dst, const void* value, size_t elementSize, size_t count);

// What a pointer handed to a library points into.
enum class MemoryKind { Device, PinnedHost, PageableHost };

// Exercise 3: what p points into, as the driver knows it: device memory, pinned host memory, or memory the driver never saw.
MemoryKind memoryKind(const void* p);

}  // namespace ex05
