// The exercises of lesson 25 (core dumps): their tasks are in exercises.cpp beside this file, their
// checks in tests/exercises/exercise25_core_dumps.cpp.
#pragma once

#include "workbook.hpp"

#include <string>

namespace ex25 {

// Exercise 1: from now on, a fault in a context created later writes a lightweight GPU core dump to path.
void captureGpuCrashes(const std::string& path, bool keepRunning);

// Exercise 2: a fault in context (and only there) writes a lightweight dump to path, and the process keeps its error.
void dumpContextTo(CUcontext context, const std::string& path);

// What a scope's core-dump settings say: dumps on exception, where a dump goes, what it leaves out.
struct DumpSettings {
  bool onException = false;      // CU_COREDUMP_ENABLE_ON_EXCEPTION
  std::string file;              // CU_COREDUMP_FILE, up to its NUL
  unsigned long long flags = 0;  // CU_COREDUMP_GENERATION_FLAGS
};

// Exercise 3: the settings of context, or the global ones when context is nullptr.
DumpSettings readDumpSettings(CUcontext context);

}  // namespace ex25
