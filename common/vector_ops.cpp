#include "vector_ops.hpp"

#include "cuda_check.hpp"

namespace wb {

//! [launch]
std::vector<float> fillAndScale(CUfunction fill, CUfunction scale, unsigned n, float value, float factor,
                                float offset) {
  CUdeviceptr out = 0;
  CU_CHECK(cuMemAlloc(&out, n * sizeof(float)));
  // cuLaunchKernel takes an array of pointers to the arguments, in the kernel's parameter order.
  void* fillArgs[] = {&out, &value, &n};
  void* scaleArgs[] = {&out, &factor, &offset, &n};
  const unsigned threads = 256, blocks = (n + threads - 1) / threads;
  std::vector<float> host(n);
  try {
    CU_CHECK(cuLaunchKernel(fill, blocks, 1, 1, threads, 1, 1, 0, nullptr, fillArgs, nullptr));
    CU_CHECK(cuLaunchKernel(scale, blocks, 1, 1, threads, 1, 1, 0, nullptr, scaleArgs, nullptr));
    CU_CHECK(cuCtxSynchronize());  // launches are asynchronous: a kernel's error shows up here
    CU_CHECK(cuMemcpyDtoH(host.data(), out, n * sizeof(float)));
  } catch (...) {
    cuMemFree(out);
    throw;
  }
  CU_CHECK(cuMemFree(out));
  return host;
}
//! [launch]

size_t mismatches(const std::vector<float>& values, float expected) {
  size_t bad = 0;
  for (float v : values) bad += v != expected;
  return bad;
}

CUresult tryLaunchFill(CUfunction fill) {
  CUdeviceptr out = 0;
  CU_CHECK(cuMemAlloc(&out, 256 * sizeof(float)));
  unsigned n = 256;
  float value = 1.0f;
  void* args[] = {&out, &value, &n};
  const CUresult rc = cuLaunchKernel(fill, 1, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr);
  const CUresult synced = rc == CUDA_SUCCESS ? cuCtxSynchronize() : CUDA_SUCCESS;
  CU_CHECK(cuMemFree(out));  // freed before a failed synchronize is reported, like fillAndScale
  CU_CHECK(synced);
  return rc;
}

}  // namespace wb
