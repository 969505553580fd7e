// The exercises of lesson 12 (versions and entry points): their tasks are in exercises.cpp beside
// this file, their checks in tests/exercises/exercise12_versions_and_entry_points.cpp.
#pragma once

#include "workbook.hpp"

#include <string>
#include <vector>

namespace ex12 {

// What a lookup of a driver function by name and CUDA version found.
enum class EntryPoint {
  Found,         // pfn is the function, with the signature of the version asked for
  NotInDriver,   // this driver has no function of that name (an older driver, or a misspelt name)
  NotInVersion,  // the driver has it, but only from a CUDA version newer than the one asked for
  BeyondDriver,  // the version asked for is newer than any this driver supports
};

struct Resolved {
  EntryPoint status = EntryPoint::NotInDriver;
  void* pfn = nullptr;  // only when Found: cast it to the PFN_ type of that version (cudaTypedefs.h)
};

// Exercise 1: looks up the driver function symbol as of CUDA version cudaVersion (1000 * major + 10 * minor), telling every answer apart.
Resolved resolveEntryPoint(const char* symbol, int cudaVersion);

// Whether a driver runs a program built with a toolkit.
enum class Compatibility {
  Full,          // the driver supports the toolkit's CUDA version or a newer one
  MinorVersion,  // the same major version, an older minor: it runs, without what is newer than the driver
  None,          // an older major version: the driver cannot run it
};

struct VersionCheck {
  Compatibility level = Compatibility::None;
  std::string message;  // one line for the log: both versions as major.minor, and what to do
};

// Exercise 2: what a driver of CUDA version driverVersion means for a program built with toolkitVersion (both 1000 * major + 10 * minor).
VersionCheck checkVersions(int driverVersion, int toolkitVersion);
// Exercise 2, too: the same for this process: the driver it runs on against the cuda.h it was built with.
VersionCheck checkThisProcess();

// What loadKernel loaded; the caller unloads module.
struct LoadedKernel {
  CUmodule module = nullptr;
  CUfunction function = nullptr;
  bool fromPtx = false;  // whether the driver compiled the PTX, because the cubin could not be used here
};

// Exercise 3: loads the kernel name from cubin into the current context, or from ptx (text ending in a NUL) when the cubin cannot be used here.
LoadedKernel loadKernel(const std::vector<char>& cubin, const std::vector<char>& ptx, const char* name);

}  // namespace ex12
