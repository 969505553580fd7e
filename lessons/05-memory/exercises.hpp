// The exercises of lesson 05 (memory): their tasks are in exercises.cpp beside this file, their
// checks in tests/exercises/exercise05_memory.cpp.
#pragma once

#include "workbook.hpp"

#include <cstddef>

namespace ex05 {

// Exercise 1: copies bytes from host memory at src to dst, only if they fit between dst and the end of the allocation dst lies in.
void uploadWithin(CUdeviceptr dst, const void* src, size_t bytes);

// Exercise 2: sets count elements of elementSize bytes (1, 2, 4 or 8) from dst on to the bytes at value, without a kernel.
void fillElements(CUdeviceptr dst, const void* value, size_t elementSize, size_t count);

// What a pointer handed to a library points into.
enum class MemoryKind { Device, PinnedHost, PageableHost };

// Exercise 3: what p points into, as the driver knows it: device memory, pinned host memory, or memory the driver never saw.
MemoryKind memoryKind(const void* p);

}  // namespace ex05
