// Wrong (R7): function() pushes the current context around the load and checks the load with CU_CHECK in between
//
// "Pin the context for the load": harmless while the load works, but a load that fails throws
// between the push and the pop, and the caller's stack keeps one context more. In "R4 R5 R7: a load
// that fails ...", `wbx::contextStack() == stack` fails after the failed cuModuleLoadData.
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
  if (!ctx) CU_CHECK(CUDA_ERROR_INVALID_CONTEXT);  // nowhere to load: the error a load would give
  auto it = modules_.find(ctx);
  if (it == modules_.end()) {
    CUmodule module = nullptr;
    CU_CHECK(cuCtxPushCurrent(ctx));
    CU_CHECK(cuModuleLoadData(&module, image_.data()));
    CUcontext popped = nullptr;
    CU_CHECK(cuCtxPopCurrent(&popped));
    it = modules_.emplace(ctx, module).first;
  }
  CUfunction f = nullptr;
  CU_CHECK(cuModuleGetFunction(&f, it->second, name));
  return f;
}

size_t ModuleCache::modules() const { return modules_.size(); }

}  // namespace ex06
