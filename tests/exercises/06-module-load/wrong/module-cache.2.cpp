// Wrong (R2): keeps one module per device (the current context's device), not per context
//
// "A module is loaded onto a GPU." Two contexts on one device are two places a module must be loaded:
// the check's own context on device 0 gets the primary context's module and function, so
// `loaded == expectedModules` and `fillOwn != fillPrimary` fail.
#include "exercises.hpp"

#include <map>

namespace ex06 {

namespace {
// The modules by device, beside the header's map (which keeps the context each was loaded in).
std::map<const ModuleCache*, std::map<CUdevice, CUmodule>> byDevice;
}  // namespace

ModuleCache::ModuleCache(const std::string& file) { image_ = wb::readVerifiedImage(file); }

ModuleCache::~ModuleCache() {
  for (const auto& entry : modules_) {
    if (cuCtxPushCurrent(entry.first) != CUDA_SUCCESS) continue;
    cuModuleUnload(entry.second);
    CUcontext popped = nullptr;
    cuCtxPopCurrent(&popped);
  }
  byDevice.erase(this);
}

CUfunction ModuleCache::function(const char* name) {
  CUcontext ctx = nullptr;
  CU_CHECK(cuCtxGetCurrent(&ctx));
  if (!ctx) CU_CHECK(CUDA_ERROR_INVALID_CONTEXT);
  CUdevice dev = 0;
  CU_CHECK(cuCtxGetDevice(&dev));
  std::map<CUdevice, CUmodule>& mine = byDevice[this];
  auto it = mine.find(dev);
  if (it == mine.end()) {
    CUmodule module = nullptr;
    CU_CHECK(cuModuleLoadData(&module, image_.data()));
    modules_.emplace(ctx, module);
    it = mine.emplace(dev, module).first;
  }
  CUfunction f = nullptr;
  CU_CHECK(cuModuleGetFunction(&f, it->second, name));
  return f;
}

size_t ModuleCache::modules() const { return modules_.size(); }

}  // namespace ex06
