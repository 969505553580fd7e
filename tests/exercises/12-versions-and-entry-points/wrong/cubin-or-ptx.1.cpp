// Wrong (R1): tries the PTX first, "since PTX runs on every GPU", and the cubin only when the PTX fails
//
// Every kernel loads, but on the GPUs the cubin was built for the driver compiles the PTX at every
// cold start instead of using the machine code that was shipped: the check's `!fromOwn.fromPtx`
// fails in the child with the JIT allowed.
#include "exercises.hpp"

namespace ex12 {

LoadedKernel loadKernel(const std::vector<char>& cubin, const std::vector<char>& ptx, const char* name) {
  for (const std::vector<char>* image : {&ptx, &cubin}) {
    LoadedKernel k;
    CUresult rc = cuModuleLoadData(&k.module, image->data());
    if (rc == CUDA_SUCCESS) rc = cuModuleGetFunction(&k.function, k.module, name);
    if (rc == CUDA_SUCCESS) {
      k.fromPtx = image == &ptx;
      return k;
    }
    if (k.module) cuModuleUnload(k.module);
    if (image == &cubin) CU_CHECK(rc);
  }
  return {};
}

}  // namespace ex12
