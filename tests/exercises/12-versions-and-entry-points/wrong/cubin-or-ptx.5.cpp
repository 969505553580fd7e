// Wrong (R2): falls back to the PTX only when the cubin's load fails; a failed kernel lookup in a loaded cubin is thrown at once
//
// "If the module loaded, the image is usable." Under lazy loading, or when the image lacks the
// kernel, the error comes from cuModuleGetFunction: then the PTX is never tried, and the checked
// lookup throws past the loaded module, which stays loaded. For a kernel neither image has, the
// check's `heldByMissing == ""` fails ("1 module more").
#include "exercises.hpp"

namespace ex12 {

LoadedKernel loadKernel(const std::vector<char>& cubin, const std::vector<char>& ptx, const char* name) {
  LoadedKernel k;
  if (cuModuleLoadData(&k.module, cubin.data()) == CUDA_SUCCESS) {
    CU_CHECK(cuModuleGetFunction(&k.function, k.module, name));
    return k;
  }
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
