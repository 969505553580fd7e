// Wrong (R4): loads the PTX beside the cubin up front, "to have the fallback ready", and keeps it
//
// Both images are loaded first and the cubin's kernel is taken when it has one; the PTX's module,
// loaded for nothing (and compiled at every cold start), is never unloaded, and no caller holds its
// handle. In the child with the JIT allowed, loaded from the device's own cubin, the process holds
// two modules more and `heldByOwn == "1 module more"` fails (in "R1 R2 R3 R4: with the JIT allowed
// ...").
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
  LoadedKernel k, spare;
  const CUresult fromPtx = tryLoad(ptx.data(), name, spare);  // the fallback, ready before it is needed
  if (tryLoad(cubin.data(), name, k) == CUDA_SUCCESS) return k;
  if (fromPtx == CUDA_SUCCESS) {
    spare.fromPtx = true;
    return spare;
  }
  CU_CHECK(tryLoad(ptx.data(), name, k));
  k.fromPtx = true;
  return k;
}

}  // namespace ex12
