// Kernels for lesson 15 (CUDA graphs). extern "C", so the host finds them by name.
//
// tick is as short as a kernel gets: one thread adds 1 to a counter, so N ticks in stream order
// leave the counter at exactly N, and the time of N launches is almost all launch cost. axpb is a
// kernel with arguments worth changing between launches. loop_body is the body of a conditional
// WHILE node: it counts its iterations and tells the graph whether to run it again.

//! [tick]
// *counter += 1, by one thread: what N launches cost, with a result that proves each one ran.
extern "C" __global__ void tick(unsigned int* counter) { *counter += 1; }
//! [tick]

// data[i] = a * data[i] + b for every i < n.
extern "C" __global__ void axpb(float* data, unsigned int n, float a, float b) {
  for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    data[i] = a * data[i] + b;
}

// Conditional nodes and cudaGraphSetConditional arrived in CUDA 12.3; the lesson uses them from 12.4
// (its host code is guarded the same way), so an older nvcc builds this image without loop_body.
#if defined(CUDART_VERSION) && CUDART_VERSION >= 12040
//! [loop-body]
// One iteration of a WHILE node's body: counts itself in *count and sets the node's condition to
// whether another iteration is due. One thread, so nothing races on the condition.
extern "C" __global__ void loop_body(unsigned int* count, const unsigned int* limit,
                                     cudaGraphConditionalHandle condition) {
  const unsigned int done = ++*count;
  cudaGraphSetConditional(condition, done < *limit ? 1u : 0u);
}
//! [loop-body]
#endif
