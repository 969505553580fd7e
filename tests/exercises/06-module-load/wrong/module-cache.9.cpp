// Wrong (R1): the constructor reads the image's bytes from the kernel folder itself, unchecked
//
// "A file is a file: read it into image_." The driver trusts the sizes written inside an image, and
// a fatbin cut short makes cuModuleLoadData hang or crash (lesson 06, step 6) far from the cause.
// Given a copy cut to 300 bytes the constructor takes it, and `refused` is false.
#include "exercises.hpp"

#include <fstream>
#include <iterator>
#include <stdexcept>

namespace ex06 {

ModuleCache::ModuleCache(const std::string& file) {
  std::ifstream in(wb::kernelImage(file), std::ios::binary);
  image_.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  if (image_.empty()) throw std::runtime_error("cannot read " + wb::kernelImage(file));
}

ModuleCache::~ModuleCache() {
  for (const auto& entry : modules_) {
    if (cuCtxPushCurrent(entry.first) != CUDA_SUCCESS) continue;
    cuModuleUnload(entry.second);
    CUcontext popped = nullptr;
    cuCtxPopCurrent(&popped);
  }
}

CUfunction ModuleCache::function(const char* name) {
  CUcontext ctx = nullptr;
  CU_CHECK(cuCtxGetCurrent(&ctx));
  if (!ctx) CU_CHECK(CUDA_ERROR_INVALID_CONTEXT);
  auto it = modules_.find(ctx);
  if (it == modules_.end()) {
    CUmodule module = nullptr;
    CU_CHECK(cuModuleLoadData(&module, image_.data()));
    it = modules_.emplace(ctx, module).first;
  }
  CUfunction f = nullptr;
  CU_CHECK(cuModuleGetFunction(&f, it->second, name));
  return f;
}

size_t ModuleCache::modules() const { return modules_.size(); }

}  // namespace ex06
