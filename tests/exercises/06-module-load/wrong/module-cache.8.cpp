// Wrong (R2): loads the image on every request and stores it over the context's entry
//
// "modules_[ctx] = the module" without asking first whether the context has one: every request
// loads again, and the module it replaces is never unloaded. The map still counts one per context,
// but the process holds a module per request: `heldModules == expectedModules` fails.
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
  CUmodule module = nullptr;
  CU_CHECK(cuModuleLoadData(&module, image_.data()));
  modules_[ctx] = module;
  CUfunction f = nullptr;
  CU_CHECK(cuModuleGetFunction(&f, module, name));
  return f;
}

size_t ModuleCache::modules() const { return modules_.size(); }

}  // namespace ex06
