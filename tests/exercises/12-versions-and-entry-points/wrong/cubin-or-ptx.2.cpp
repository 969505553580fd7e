// Wrong (R3): when both images fail, throws the cubin's error, "the first thing that went wrong"
//
// On a GPU the cubin was not built for its error is expected (CUDA_ERROR_NO_BINARY_FOR_GPU) and says
// nothing about why the fallback failed; the PTX's (the JIT is forbidden) is the one a deployer can
// act on. In the child with the JIT forbidden the check's `thrown == ptxAlone` fails.
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
  const CUresult cubinError = tryLoad(cubin.data(), name, k);
  if (cubinError == CUDA_SUCCESS) return k;
  if (tryLoad(ptx.data(), name, k) != CUDA_SUCCESS) CU_CHECK(cubinError);
  k.fromPtx = true;
  return k;
}

}  // namespace ex12
