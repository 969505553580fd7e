// The exercises of lesson 23 (unified memory): their tasks are in exercises.cpp beside this file,
// their checks in tests/exercises/exercise23_unified_memory.cpp.
#pragma once

#include "workbook.hpp"

#include <cstddef>
#include <vector>

namespace ex23 {

// Exercise 1: makes bytes of managed memory at ptr ready for a kernel on dev in stream: prefers dev and
// is prefetched there in stream. Returns false, and does nothing, where dev lacks concurrent managed access.
bool placeForKernel(CUdeviceptr ptr, size_t bytes, CUdevice dev, CUstream stream);

// Where a managed range's advice and prefetches point, each for the whole range: type
// CU_MEM_LOCATION_TYPE_INVALID where there is none, or none that holds for all of it.
struct Placement {
  CUmemLocation preferred{};     // what CU_MEM_ADVISE_SET_PREFERRED_LOCATION set
  CUmemLocation lastPrefetch{};  // where cuMemPrefetchAsync (or a batch) last sent it
  bool readMostly = false;       // CU_MEM_ADVISE_SET_READ_MOSTLY
};

// Exercise 2: what the driver says of bytes of managed memory at ptr.
Placement placementOf(CUdeviceptr ptr, size_t bytes);

// A range of managed memory.
struct Range {
  CUdeviceptr ptr;
  size_t bytes;
};

// Exercise 3: hands ranges whose contents are no longer needed to the processor at to: discarded and
// prefetched there, all of them in one call, in stream.
void handOver(const std::vector<Range>& ranges, CUmemLocation to, CUstream stream);

}  // namespace ex23
