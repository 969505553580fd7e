// What lesson 14's suites (tests/lesson14_virtual_memory.cpp) and its exercise checks
// (tests/exercises/exercise14_virtual_memory.cpp) both stand on: allocation properties, the
// granularity, access as cuMemGetAccess reports it, and what a parent sends a child with the
// descriptor of shared memory.
#pragma once

#include "support.hpp"

#include <cstddef>
#include <cstdint>

namespace l14 {

constexpr uint32_t kMark = 0x600DF00Du;  // what a child writes into memory it shares with its parent

inline size_t roundUp(size_t bytes, size_t granule) { return (bytes + granule - 1) / granule * granule; }

// Pinned device memory on dev, shareable as shareAs.
inline CUmemAllocationProp onDevice(CUdevice dev, CUmemAllocationHandleType shareAs = CU_MEM_HANDLE_TYPE_NONE) {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = dev;
  prop.requestedHandleTypes = shareAs;
  return prop;
}

inline size_t granularity(CUdevice dev, CUmemAllocationGranularity_flags which = CU_MEM_ALLOC_GRANULARITY_MINIMUM) {
  const CUmemAllocationProp prop = onDevice(dev);
  size_t granule = 0;
  CU_CHECK(cuMemGetAllocationGranularity(&granule, &prop, which));
  return granule;
}

// True when cuMemGetAccess says dev may read and write at p.
inline bool canReadWrite(CUdevice dev, CUdeviceptr p) {
  CUmemLocation where{};
  where.type = CU_MEM_LOCATION_TYPE_DEVICE;
  where.id = dev;
  unsigned long long flags = 0;
  return cuMemGetAccess(&flags, &where, p) == CUDA_SUCCESS && flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
}

// What travels with the descriptor (wb::sendFd sends the descriptor itself as SCM_RIGHTS; see lesson 14's page).
struct ShareMessage {
  uint64_t bytes;
  uint32_t seed;
};

}  // namespace l14
