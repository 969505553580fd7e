// The exercises of lesson 14 (virtual memory): their tasks are in exercises.cpp beside this file,
// their checks in tests/exercises/exercise14_virtual_memory.cpp.
#pragma once

#include "workbook.hpp"

#include <cstddef>
#include <utility>
#include <vector>

namespace ex14 {

// Exercise 1: device memory that grows in place behind one reservation; its base address never changes.
class GrowableBuffer {
 public:
  GrowableBuffer(CUdevice dev, size_t capacity);  // reserves capacity bytes of addresses, in whole granules; maps nothing yet
  ~GrowableBuffer();                               // unmaps every piece and frees the reservation
  GrowableBuffer(const GrowableBuffer&) = delete;
  GrowableBuffer& operator=(const GrowableBuffer&) = delete;

  void grow(size_t bytes);     // at least bytes usable from data(), the contents kept; std::length_error past capacity
  CUdeviceptr data() const;    // the base address: the same from construction to destruction
  size_t size() const;         // the bytes usable now: 0, or a multiple of the granularity

 private:
  // State you will need (change it as you like).
  struct State {
    CUdevice dev = 0;
    size_t granularity = 0, capacity = 0, size = 0;
    CUdeviceptr base = 0;
    std::vector<std::pair<CUdeviceptr, size_t>> pieces;  // each cuMemMap, to unmap one by one
  } s_;
};

// What allocate() returns: the address, and the bytes reserved and mapped there.
struct Allocation {
  CUdeviceptr ptr = 0;
  size_t size = 0;
};

// Exercise 2: at least bytes of device memory on dev in whole granules, mapped, read-write for dev; the mapping owns it.
Allocation allocate(CUdevice dev, size_t bytes);

// Exercise 3: in another process, maps the allocation the descriptor fd names (size bytes) for dev; returns its address.
CUdeviceptr mapShared(int fd, size_t size, CUdevice dev);

}  // namespace ex14
