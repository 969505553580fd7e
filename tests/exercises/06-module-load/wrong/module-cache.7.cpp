// Wrong (R4): returns what cuModuleGetFunction left in its CUfunction without checking the CUresult
//
// "The lookup cannot fail: the names are ours." A misspelt or missing name comes back as a null
// CUfunction that fails only later, at a launch far from the cause: `function("no_such_kernel")`
// returns instead of throwing, and the check fails there.
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
  auto it = modules_.find(ctx);
  if (it == modules_.end()) {
    CUmodule module = nullptr;
    CU_CHECK(cuModuleLoadData(&module, image_.data()));
    it = modules_.emplace(ctx, module).first;
  }
  CUfunction f = nullptr;
  cuModuleGetFunction(&f, it->second, name);
  return f;
}

size_t ModuleCache::modules() const { return modules_.size(); }

}  // namespace ex06
