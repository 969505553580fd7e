// Wrong (R3): when the cubin loads but its kernel lookup fails, falls back to the PTX without unloading the cubin's module
//
// The fallback happens and the right error comes out, but the module of the cubin stays loaded in
// the context, one for every such call, and nobody holds its handle to unload it. For a kernel
// neither image has, the check's `heldByMissing == ""` fails ("1 module more").
#include "exercises.hpp"

namespace ex12 {

LoadedKernel loadKernel(const std::vector<char>& cubin, const std::vector<char>& ptx, const char* name) {
  LoadedKernel k;
  if (cuModuleLoadData(&k.module, cubin.data()) == CUDA_SUCCESS &&
      cuModuleGetFunction(&k.function, k.module, name) == CUDA_SUCCESS)
    return k;
  k = LoadedKernel{};
  CU_CHECK(cuModuleLoadData(&k.module, ptx.data()));
  const CUresult rc = cuModuleGetFunction(&k.function, k.module, name);
  if (rc != CUDA_SUCCESS) {
    cuModuleUnload(k.module);
    CU_CHECK(rc);
  }
  k.fromPtx = true;
  return k;
}

}  // namespace ex12
