// The exercises of lesson 01 (init): their tasks are in exercises.cpp beside this file, their checks
// in tests/exercises/exercise01_init.cpp.
#pragma once

#include "workbook.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace ex01 {

// What an inventory or a support log records about one GPU.
struct DeviceReport {
  std::string name;      // "NVIDIA H100 80GB HBM3"
  std::string uuid;      // as nvidia-smi -L prints it: "GPU-" and 8-4-4-4-12 lowercase hex digits
  std::string pciBusId;  // "0000:19:00.0"
  int major = 0, minor = 0;  // compute capability
  int multiprocessors = 0;
  size_t totalMemory = 0;  // bytes
  bool managedMemory = false, concurrentManagedAccess = false;
};

// What a build of a program needs of a device to run on it.
struct Requirements {
  int major = 0, minor = 0;              // the lowest compute capability it was built for
  size_t memoryBytes = 0;                // at least this much device memory in total
  bool concurrentManagedAccess = false;  // host and kernels touch managed memory at the same time
};

// Exercise 1: everything DeviceReport holds about the device at ordinal; throws wb::DriverError for a bad ordinal.
DeviceReport reportDevice(int ordinal);

// Exercise 2: the ordinals of the visible devices that meet need, in ascending order.
std::vector<int> eligibleDevices(const Requirements& need);

// Exercise 3: the ordinal of the visible device whose UUID nvidia-smi prints as uuid, or -1; may be the first CUDA call.
int ordinalOfUuid(const std::string& uuid);

}  // namespace ex01
