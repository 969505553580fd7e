// The exercises of lesson 06 (module loading): their tasks are in exercises.cpp beside this file,
// their checks in tests/exercises/exercise06_module_load.cpp.
#pragma once

#include "workbook.hpp"

#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace ex06 {

// What loading PTX gave: the module, or the code and what the JIT compiler said was wrong.
struct PtxLoad {
  CUresult result = CUDA_SUCCESS;
  CUmodule module = nullptr;  // loaded into the current context when result is CUDA_SUCCESS; the caller unloads it
  std::string errorLog;       // the JIT's error log as text: empty when nothing went wrong
};

// Exercise 1: loads PTX text into the current context, returning the code and the JIT's error log instead of throwing.
PtxLoad loadPtx(const std::string& ptx);

// Exercise 2: one module of a kernel image per context, loaded the first time a context asks for a function.
class ModuleCache {
 public:
  explicit ModuleCache(const std::string& file);  // an image in the kernel folder, e.g. "vector_ops.fatbin"
  ~ModuleCache();                                  // unloads every module it loaded, each in its own context
  ModuleCache(const ModuleCache&) = delete;
  ModuleCache& operator=(const ModuleCache&) = delete;
  CUfunction function(const char* name);  // name in the current context's module, loaded there on first use
  size_t modules() const;                 // how many modules it holds

 private:
  std::vector<char> image_;                // the image's bytes, checked once (wb::readVerifiedImage)
  std::map<CUcontext, CUmodule> modules_;  // one module per context
};

// One image of a kernel, as a build ships it.
struct Image {
  std::string file;  // "vector_ops.sm_86.cubin", "vector_ops.ptx"
  unsigned arch;     // 86: machine code for sm_86, or PTX for compute_86
  bool ptx;          // true: PTX, which the driver compiles at load; false: a cubin of machine code
};

// Exercise 3: the image of images that runs on a device of compute capability deviceArch (90 for 9.0), or nullptr.
const Image* chooseImage(unsigned deviceArch, const std::vector<Image>& images);

}  // namespace ex06
