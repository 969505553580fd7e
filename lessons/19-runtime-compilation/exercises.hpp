// The exercises of lesson 19 (runtime compilation): their tasks are in exercises.cpp beside this
// file, their checks in tests/exercises/exercise19_runtime_compilation.cpp.
#pragma once

#include "workbook.hpp"

#include <functional>
#include <string>
#include <vector>

namespace ex19 {

// Exercise 1: what compiling one source for a device gave: a loaded library, or the log saying why not.
struct Built {
  CUlibrary library = nullptr;  // loaded when the source compiled (the caller unloads it), else nullptr
  std::string log;              // NVRTC's log: the errors when it did not compile, any warnings when it did
};
Built compileAndLoad(const std::string& source, const std::string& name, CUdevice dev);

// Exercise 2: the instances of a template kernel, one per name expression, in the order given.
struct Instances {
  CUlibrary library = nullptr;            // holds them all (the caller unloads it)
  std::vector<CUkernel> kernels;          // kernels[i] is the instance nameExpressions[i] names
  std::vector<std::string> loweredNames;  // its mangled name, as NVRTC gave it
};
Instances instantiate(const std::string& source, const std::vector<std::string>& nameExpressions, CUdevice dev);

// Exercise 3: everything that decides what NVRTC produces for a source, and the compiler a cache
// calls on a miss.
struct CompileInputs {
  std::string source;
  std::vector<std::string> options;  // NVRTC's options, --gpu-architecture among them
  int ccMajor = 0, ccMinor = 0;      // the device's compute capability
  int nvrtcMajor = 0, nvrtcMinor = 0;
  // The NVRTC library itself (its file's path, size and modification time, say): a patch release
  // changes the code NVRTC generates, but not what nvrtcVersion answers.
  std::string nvrtcBuild;
  int driverVersion = 0;             // cuDriverGetVersion
};
using Compiler = std::function<std::vector<char>(const CompileInputs&)>;  // returns a cubin
std::vector<char> cachedCompile(const std::string& dir, const CompileInputs& inputs, const Compiler& compile);

}  // namespace ex19
