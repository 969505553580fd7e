// The exercises of lesson 32 (sleep and wake): their tasks are in exercises.cpp beside this file,
// their checks in tests/exercises/exercise32_sleep_and_wake.cpp.
#pragma once

#include "workbook.hpp"

#include <stdexcept>
#include <vector>

namespace ex32 {

// One region of the component: a range of addresses reserved for the region's whole life, with
// device memory mapped behind it while awake (handle != 0) and none while asleep (handle == 0).
struct Region {
  CUdevice device = 0;
  CUdeviceptr base = 0;                      // the reservation: the same from mapRegion to freeRegion
  size_t size = 0;                           // a multiple of the device's allocation granularity
  CUmemGenericAllocationHandle handle = 0;  // the memory mapped at base; 0 while asleep
};

// Exercise 1: a region as reserve + create + map + access, and all of it given back.
Region mapRegion(CUdevice dev, size_t bytes);
void freeRegion(Region& region);

// Exercise 2: sleep: save what must survive (saveTo: pinned host memory of region.size bytes, or
// nullptr to discard), unmap and release the memory, keep the addresses.
void sleepRegion(Region& region, void* saveTo);

// Exercise 3: wake: create and map memory again at the same addresses, grant access, and restore
// (restoreFrom: what sleepRegion saved, or nullptr for a region that was discarded).
void wakeRegion(Region& region, const void* restoreFrom);

// Exercise 4: sleep only when no stream that uses the region still has work.
class SleepRefused : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
void sleepWhenIdle(Region& region, void* saveTo, const std::vector<CUstream>& users);

}  // namespace ex32
