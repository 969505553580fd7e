// Wrong (R5): takes the map's slot with modules_[ctx] before loading, so a load that fails leaves an empty entry
//
// "operator[] finds it or makes it." When cuModuleLoadData fails, the slot stays with a null module:
// the cache counts a module it does not have. After the failed load `cache.modules() == 0` fails.
#include "exercises.hpp"

namespace ex06 {

ModuleCache::ModuleCache(const std::string& file) { image_ = wb::readVerifiedImage(file); }

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
  CUmodule& module = modules_[ctx];
  if (!module) CU_CHECK(cuModuleLoadData(&module, image_.data()));
  CUfunction f = nullptr;
  CU_CHECK(cuModuleGetFunction(&f, module, name));
  return f;
}

size_t ModuleCache::modules() const { return modules_.size(); }

}  // namespace ex06
