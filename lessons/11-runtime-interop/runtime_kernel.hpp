// The host side of runtime_kernel.cu, for the lesson's C++ sources (which nvcc does not compile).
#pragma once

#include <cuda_runtime.h>

// add_one<<<...>>>(data, n) in stream, the runtime's way; returns cudaGetLastError().
cudaError_t launchAddOne(float* data, unsigned n, cudaStream_t stream);
// The kernel's entry address, as cudaGetFuncBySymbol and cudaGetKernel want it.
const void* addOneEntry();
