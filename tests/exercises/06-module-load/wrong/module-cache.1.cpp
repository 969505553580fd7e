// Wrong (R2): loads the image once, in whichever context asks first, and hands its functions to every context
//
// "A kernel is a kernel." The second context gets the first context's function, which cannot launch
// there: `loaded == expectedModules` and `fillOwn != fillPrimary` fail (the check stops before it
// would launch it).
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
  if (modules_.empty()) {
    CUcontext ctx = nullptr;
    CU_CHECK(cuCtxGetCurrent(&ctx));
    CUmodule module = nullptr;
    CU_CHECK(cuModuleLoadData(&module, image_.data()));
    modules_.emplace(ctx, module);
  }
  CUfunction f = nullptr;
  CU_CHECK(cuModuleGetFunction(&f, modules_.begin()->second, name));
  return f;
}

size_t ModuleCache::modules() const { return modules_.size(); }

}  // namespace ex06
