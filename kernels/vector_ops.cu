// Element-wise kernels whose results the host can check exactly.
//
// They are extern "C": the lessons look kernels up by name (cuModuleGetFunction, cuLibraryGetKernel),
// and a C++ name would be mangled (fill would be _Z4fillPffj).

//! [kernels]
// out[i] = value for every i < n.
extern "C" __global__ void fill(float* out, float value, unsigned int n) {
  for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    out[i] = value;
}

// data[i] = data[i] * factor + offset for every i < n.
extern "C" __global__ void scale(float* data, float factor, float offset, unsigned int n) {
  for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    data[i] = data[i] * factor + offset;
}
//! [kernels]
