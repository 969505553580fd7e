// Wrong (R7): the destructor makes each module's context current with cuCtxSetCurrent and leaves the last one
//
// "Set the context, unload, next": cuCtxSetCurrent replaces the top of the caller's stack instead of
// pushing onto it, and nothing puts the caller's context back. The check destroys the cache with two
// contexts on its stack, and `stackAfter == stackBefore` fails.
#include "exercises.hpp"

namespace ex06 {

ModuleCache::ModuleCache(const std::string& file) { image_ = wb::readVerifiedImage(file); }

ModuleCache::~ModuleCache() {
  for (const auto& entry : modules_) {
    if (cuCtxSetCurrent(entry.first) != CUDA_SUCCESS) continue;
    cuModuleUnload(entry.second);
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
