// The exercises of lesson 07 (library load): their tasks are in exercises.cpp beside this file,
// their checks in tests/exercises/exercise07_library_load.cpp.
#pragma once

#include "workbook.hpp"

#include <cstddef>
#include <map>
#include <string>

namespace ex07 {

// Exercise 1: the kernels of one image, loaded once for the process, launchable in any context.
class KernelSet {
 public:
  // Loads the image at imagePath; needs no current context and makes none.
  explicit KernelSet(const std::string& imagePath);
  // Unloads it.
  ~KernelSet();
  KernelSet(const KernelSet&) = delete;
  KernelSet& operator=(const KernelSet&) = delete;
  // The kernel called name, as a CUfunction that launches in whatever context is current then.
  CUfunction function(const std::string& name);

 private:
  CUlibrary library_ = nullptr;
  std::map<std::string, CUfunction> handedOut_;  // what function() returned, by name, if you keep it
};

// Exercise 2: what loadPreferringOverride loaded, and from where.
struct LoadedLibrary {
  CUlibrary library = nullptr;  // the caller unloads it
  bool fromOverride = false;    // true: from the override file; false: from the embedded image
};

// Exercise 2: the library from overridePath when that file is an intact fatbin, else from the embedded image.
LoadedLibrary loadPreferringOverride(const std::string& overridePath, const void* embedded, std::size_t embeddedSize);

}  // namespace ex07
