// Reference solution of lesson 12's exercise cubin-or-ptx (lessons/12-versions-and-entry-points/exercises.cpp).
#include "exercises.hpp"

namespace ex12 {

namespace {

// Loads image into the current context and gets the kernel name from it. Under lazy loading the
// load may succeed and the kernel fail, so both are the load; on failure nothing stays loaded.
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

// The cubin first: on a GPU it was built for it runs as it is. The PTX only where the cubin cannot
// run, and its error, not the cubin's, when it fails too: that one says why there is no kernel.
LoadedKernel loadKernel(const std::vector<char>& cubin, const std::vector<char>& ptx, const char* name) {
  LoadedKernel k;
  if (tryLoad(cubin.data(), name, k) == CUDA_SUCCESS) return k;
  CU_CHECK(tryLoad(ptx.data(), name, k));
  k.fromPtx = true;
  return k;
}

}  // namespace ex12
