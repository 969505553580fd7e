// The exercises of lesson 13 (memory pools): their tasks are in exercises.cpp beside this file,
// their checks in tests/exercises/exercise13_memory_pools.cpp.
#pragma once

#include "workbook.hpp"

#include <cstddef>

namespace ex13 {

// Exercise 1: copies bytes from input to output through a scratch buffer from pool, all in stream order.
void serveRequest(CUmemoryPool pool, CUstream stream, CUdeviceptr input, CUdeviceptr output, size_t bytes);

// Exercise 2: a new pool on dev that keeps workingSetBytes reserved across synchronisations, and no more.
CUmemoryPool createSteadyPool(CUdevice dev, size_t workingSetBytes);

// Exercise 3: frees used in producer's order and returns a block of bytes for consumer that may be the same one.
CUdeviceptr handOver(CUmemoryPool pool, CUdeviceptr used, size_t bytes, CUstream producer, CUstream consumer);

}  // namespace ex13
