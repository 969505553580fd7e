// Reference solution of lesson 06's exercise module-cache (lessons/06-module-load/exercises.cpp).
#include "exercises.hpp"

namespace ex06 {

// The image is read and checked once; each context gets its module from those bytes.
ModuleCache::ModuleCache(const std::string& file) { image_ = wb::readVerifiedImage(file); }

// A module is unloaded in its own context; push and pop leave the caller's stack as it was. A
// destructor cannot report a failure, so the results are not checked.
ModuleCache::~ModuleCache() {
  for (const auto& entry : modules_) {
    if (cuCtxPushCurrent(entry.first) != CUDA_SUCCESS) continue;
    cuModuleUnload(entry.second);
    CUcontext popped = nullptr;
    cuCtxPopCurrent(&popped);
  }
}

// Keyed by the current context: the first request in a context loads the image into it (the load
// goes into the current context), every later one finds it. The map gets an entry only once a load
// has succeeded, so a failed load leaves nothing that looks like a module.
CUfunction ModuleCache::function(const char* name) {
  CUcontext ctx = nullptr;
  CU_CHECK(cuCtxGetCurrent(&ctx));
  if (!ctx) CU_CHECK(CUDA_ERROR_INVALID_CONTEXT);  // nowhere to load: the error a load would give
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
