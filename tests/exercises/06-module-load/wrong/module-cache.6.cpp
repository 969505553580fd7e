// Wrong (R3): with no context current, falls back to device 0's primary context, as the runtime would
//
// "Be helpful: the runtime makes the primary context current when there is none." The task asks for
// CUDA_ERROR_INVALID_CONTEXT: a library must not pick a device and a context for its caller. With no
// context current, `function("fill")` returns instead of throwing, and the check fails there.
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
  const bool borrowed = ctx == nullptr;
  CUdevice dev = 0;
  if (borrowed) {
    CU_CHECK(cuDeviceGet(&dev, 0));
    CU_CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CU_CHECK(cuCtxPushCurrent(ctx));
  }
  auto it = modules_.find(ctx);
  if (it == modules_.end()) {
    CUmodule module = nullptr;
    CU_CHECK(cuModuleLoadData(&module, image_.data()));
    it = modules_.emplace(ctx, module).first;
  }
  CUfunction f = nullptr;
  const CUresult rc = cuModuleGetFunction(&f, it->second, name);
  if (borrowed) {
    CUcontext popped = nullptr;
    cuCtxPopCurrent(&popped);
    cuDevicePrimaryCtxRelease(dev);
  }
  CU_CHECK(rc);
  return f;
}

size_t ModuleCache::modules() const { return modules_.size(); }

}  // namespace ex06
