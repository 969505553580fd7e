// Lesson 11's one runtime kernel: compiled by nvcc into the program itself, so the CUDA runtime
// registers it at start-up and <<<>>> can launch it. The host side sees only the functions below.
#include "runtime_kernel.hpp"

//! [runtime-kernel]
// data[i] += 1 for every i < n.
__global__ void add_one(float* data, unsigned n) {
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    data[i] += 1.0f;
}

cudaError_t launchAddOne(float* data, unsigned n, cudaStream_t stream) {
  add_one<<<(n + 255) / 256, 256, 0, stream>>>(data, n);
  return cudaGetLastError();
}

const void* addOneEntry() { return reinterpret_cast<const void*>(&add_one); }
//! [runtime-kernel]
