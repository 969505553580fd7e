// Wrong (R6): the destructor unloads each module as it is, with whatever context the caller has current
//
// "A module handle names its module: unloading needs no context." cuModuleUnload's reference says
// it unloads from the current context, and the check destroys the cache with a context on top that
// never asked for a function: in "R2 R6 R7: every context gets a module of its own ...",
// `madeCurrent >= loaded` fails (and where the driver refused the unload, the holdings check too).
#include "exercises.hpp"

namespace ex06 {

ModuleCache::ModuleCache(const std::string& file) { image_ = wb::readVerifiedImage(file); }

ModuleCache::~ModuleCache() {
  for (const auto& entry : modules_) cuModuleUnload(entry.second);
}

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
