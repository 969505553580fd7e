// Reference solutions of lesson 06's exercises.
#include "exercises.hpp"

#include <vector>

namespace ex06 {

// The JIT writes its log into the caller's buffer, up to the size given; the size travels in the
// void* itself. The buffer is zeroed and one byte longer than the size passed, so the log is always
// a C string; taking it as one drops the unused rest of the buffer. A fresh buffer per call means a
// log never carries an earlier load's errors.
PtxLoad loadPtx(const std::string& ptx) {
  std::vector<char> log(16 * 1024 + 1, '\0');
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* values[] = {log.data(), reinterpret_cast<void*>(log.size() - 1)};
  PtxLoad out;
  out.result = cuModuleLoadDataEx(&out.module, ptx.c_str(), 2, options, values);
  if (out.result != CUDA_SUCCESS) out.module = nullptr;  // nothing loaded: nothing for the caller to unload
  out.errorLog = log.data();
  return out;
}

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
// goes into the current context), every later one finds it.
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

// Machine code runs only on its own major version, from its minor version up; PTX is compiled for
// any device at least as new as its architecture. Machine code needs no compile, so it comes first;
// within each kind the newest architecture that fits is the best match.
const Image* chooseImage(unsigned deviceArch, const std::vector<Image>& images) {
  const Image* bestCubin = nullptr;
  const Image* bestPtx = nullptr;
  for (const Image& image : images) {
    if (image.ptx) {
      if (image.arch <= deviceArch && (!bestPtx || image.arch > bestPtx->arch)) bestPtx = &image;
    } else {
      const bool runs = image.arch / 10 == deviceArch / 10 && image.arch % 10 <= deviceArch % 10;
      if (runs && (!bestCubin || image.arch > bestCubin->arch)) bestCubin = &image;
    }
  }
  return bestCubin ? bestCubin : bestPtx;
}

}  // namespace ex06
