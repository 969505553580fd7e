// The exercises of lesson 00 (your machine): their tasks are in exercises.cpp beside this file, their
// checks in tests/exercises/exercise00_your_machine.cpp.
#pragma once

#include "workbook.hpp"

#include <string>

namespace ex00 {

// Whether this process can use CUDA, and if not, why.
enum class Cuda { Usable, NoDriver, StubDriver, NoDevice, ForkedAfterInit, Unusable };
struct CudaVerdict {
  Cuda cuda = Cuda::Unusable;
  std::string why;  // one line for the log
};

// Exercise 1: opens library with dlopen and asks its cuInit and cuDeviceGetCount whether CUDA works here.
CudaVerdict cudaUsable(const std::string& library = "libcuda.so.1");

// Where the driver will keep what its JIT compiles, once this process's cache settings are fixed.
struct JitCacheSetup {
  bool enabled = true;             // false under CUDA_CACHE_DISABLE=1
  std::string folder;              // the cache's folder
  bool moved = false;              // CUDA_CACHE_PATH was set to fallback because the folder could not be written
  unsigned long long maxBytes = 0;  // the cache's limit in bytes
};

// Exercise 2: the JIT cache's folder and limit, moved to fallback where it could not be written.
JitCacheSetup prepareJitCache(const std::string& fallback);

}  // namespace ex00
