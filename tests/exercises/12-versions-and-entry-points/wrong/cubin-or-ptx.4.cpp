// Wrong (R2): loads from the PTX where the cubin fails, but never says so: fromPtx stays false
//
// The kernel is right, but the caller cannot tell that this machine compiles the PTX at every cold
// start (and should get a cubin for its GPU). With the foreign cubin the check's
// `fromForeign.fromPtx` fails.
#include "exercises.hpp"

namespace ex12 {

namespace {

CUresult tryLoad(const char* image, const char* name, LoadedKernel& into) {
  CUmodule module = nullptr;
  CUfunction function = nullptr;
  CUresult rc = cuModuleLoadData(&module, image);
  if (rc == CUDA_SUCCESS) rc = cuModuleGetFunction(&function, module, name);
  if (rc != CUDA_SUCCESS) {
    if (module) cuModuleUnload(module);
    return rc;
  }
  into.module = module;
  into.function = function;
  return CUDA_SUCCESS;
}

}  // namespace

LoadedKernel loadKernel(const std::vector<char>& cubin, const std::vector<char>& ptx, const char* name) {
  LoadedKernel k;
  if (tryLoad(cubin.data(), name, k) == CUDA_SUCCESS) return k;
  CU_CHECK(tryLoad(ptx.data(), name, k));
  return k;
}

}  // namespace ex12
