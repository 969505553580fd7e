// Deliberately wrong variants of lesson 06's exercises: each check must fail on them.
#include "exercises.hpp"

namespace ex06 {

// Wrong: loads with cuModuleLoadData and reports the CUresult's description as the log. The
// description ("a PTX JIT compilation failed") says that it failed, not what or where: the check's
// `contains(first.errorLog, "this_is_not_an_instruction")` fails.
PtxLoad loadPtx(const std::string& ptx) {
  PtxLoad out;
  out.result = cuModuleLoadData(&out.module, ptx.c_str());
  if (out.result != CUDA_SUCCESS) {
    out.module = nullptr;
    out.errorLog = wb::errorName(out.result) + ": " + wb::errorDescription(out.result);
  }
  return out;
}

ModuleCache::ModuleCache(const std::string& file) { image_ = wb::readVerifiedImage(file); }

ModuleCache::~ModuleCache() {
  for (const auto& entry : modules_) {
    if (cuCtxPushCurrent(entry.first) != CUDA_SUCCESS) continue;
    cuModuleUnload(entry.second);
    CUcontext popped = nullptr;
    cuCtxPopCurrent(&popped);
  }
}

// Wrong: loads the image once, in whichever context asks first, and hands that module's functions
// to every context ("a kernel is a kernel"). The second context gets the first context's function,
// which cannot launch there: `loaded == 2` and `fillOwn != fillPrimary` fail (the check stops
// before it would launch it).
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

// Wrong: "a newer GPU runs older code": the newest cubin not newer than the device, and PTX only
// when there is none. That holds for PTX but not for machine code of another major version: for a
// 9.0 device with sm_75, sm_80 and sm_86 cubins it picks sm_86 where only the PTX runs (`got ==
// expected` fails), and on this GPU, without a cubin of its major version, `fallback->ptx` fails and
// the cubin it picked does not load.
const Image* chooseImage(unsigned deviceArch, const std::vector<Image>& images) {
  const Image* bestCubin = nullptr;
  const Image* bestPtx = nullptr;
  for (const Image& image : images) {
    if (image.arch > deviceArch) continue;
    const Image*& best = image.ptx ? bestPtx : bestCubin;
    if (!best || image.arch > best->arch) best = &image;
  }
  return bestCubin ? bestCubin : bestPtx;
}

}  // namespace ex06
