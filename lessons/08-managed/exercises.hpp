// The exercises of lesson 08 (managed): their tasks are in exercises.cpp beside this file, their
// checks in tests/exercises/exercise08_managed.cpp. Both work on a library loaded from
// counters.fatbin (kernels/counters.cu): the kernel count(n), the __managed__ variable
// managedCounter and the __device__ variable deviceCounter, each an unsigned long long.
#pragma once

#include "workbook.hpp"

#include <vector>

namespace ex08 {

// Exercise 1: sets managedCounter to 0, runs count(threads[i]) in contexts[i] for every i, and returns the total it then holds.
unsigned long long countEverywhere(CUlibrary counters, const std::vector<CUcontext>& contexts,
                                   const std::vector<unsigned>& threads);

// Exercise 2: sets deviceCounter to 0 in every one of contexts (each has its own), leaving managedCounter as it is.
void resetPerContext(CUlibrary counters, const std::vector<CUcontext>& contexts);

}  // namespace ex08
