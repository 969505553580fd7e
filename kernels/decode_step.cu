// Kernels for lesson 31 (a decode loop that never recaptures). extern "C", so the host finds them
// by name. Each is launched as one block of 256 threads over n floats (tiny, as a decode step's
// kernels are): what a step costs is then almost all launch and scheduling, which is what the
// lesson measures.
//
// Two families. The argument-driven kernels take what changes every step as launch arguments (the
// position, the cache row's address): a graph of them must be updated every step. The
// device-driven ones read the position from device memory, and the last one advances it, so the
// same executable graph computes every step with nothing updated.

//! [op]
// One operation of the step: dst[i] = src[i] * 0.5 + pos. Multiplying by 0.5 is exact, so the host
// can compute the same float values and compare them bit for bit.
extern "C" __global__ void decode_op(float* dst, const float* src, unsigned n, unsigned pos) {
  for (unsigned i = threadIdx.x; i < n; i += blockDim.x) dst[i] = src[i] * 0.5f + float(pos);
}
//! [op]

// The step's result, stored in its cache row (the row's address changes every step).
extern "C" __global__ void decode_store(float* row, const float* src, unsigned n) {
  for (unsigned i = threadIdx.x; i < n; i += blockDim.x) row[i] = src[i];
}

// At the first position of a cache block, the block is opened: its floats set to 0. The step that
// opens one has one kernel more: a shape change.
extern "C" __global__ void decode_open(float* block, unsigned count) {
  for (unsigned i = threadIdx.x; i < count; i += blockDim.x) block[i] = 0.0f;
}

//! [op-dev]
// The same operation, its position read from device memory.
extern "C" __global__ void decode_op_dev(float* dst, const float* src, unsigned n, const unsigned* pos) {
  const float p = float(*pos);
  for (unsigned i = threadIdx.x; i < n; i += blockDim.x) dst[i] = src[i] * 0.5f + p;
}

// The store, into the row *pos names; then the position advances, once every thread has read it.
extern "C" __global__ void decode_store_dev(float* cache, const float* src, unsigned n, unsigned* pos) {
  const unsigned p = *pos;
  for (unsigned i = threadIdx.x; i < n; i += blockDim.x) cache[size_t(p) * n + i] = src[i];
  __syncthreads();
  if (threadIdx.x == 0) *pos = p + 1;
}
//! [op-dev]

// Opens the block that starts at row *pos (rows floats of n each).
extern "C" __global__ void decode_open_dev(float* cache, unsigned n, unsigned rows, const unsigned* pos) {
  float* block = cache + size_t(*pos) * n;
  for (unsigned i = threadIdx.x; i < rows * n; i += blockDim.x) block[i] = 0.0f;
}

// Conditional nodes and cudaGraphSetConditional arrived in CUDA 12.3; the lesson's host code uses
// them from 12.4 (as lesson 15 does), so an older nvcc builds this image without decode_first_dev.
#if defined(CUDART_VERSION) && CUDART_VERSION >= 12040
//! [first-dev]
// The step's first operation, which also decides the shape: it sets the IF node's condition to
// whether this position opens a block. One thread sets it, so nothing races on the condition.
extern "C" __global__ void decode_first_dev(float* dst, const float* src, unsigned n, const unsigned* pos,
                                            unsigned rows, cudaGraphConditionalHandle opens) {
  const unsigned p = *pos;
  for (unsigned i = threadIdx.x; i < n; i += blockDim.x) dst[i] = src[i] * 0.5f + float(p);
  if (threadIdx.x == 0) cudaGraphSetConditional(opens, p % rows == 0 ? 1u : 0u);
}
//! [first-dev]
#endif
