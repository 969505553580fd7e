// Kernels for lesson 26 (checkpoint and restore). extern "C", so the host finds them by name.
//
// A process that is checkpointed and restored must get back every byte of its device memory. These
// two kernels let it fill gigabytes with a pattern and count what differs from it afterwards on the
// GPU, without copying the memory to the host (which would take longer than the checkpoint). Word i
// of seed s is s ^ (i * 2654435761), the same words the course's host code writes (wbt::patternAt):
// no two neighbouring words are equal and no page is all zeros, so a checkpoint that skipped or
// mixed up pages would show.

//! [pattern]
// data[i] = seed ^ (i * 2654435761), for every i < n.
extern "C" __global__ void pattern_fill(unsigned int* data, unsigned long long n, unsigned int seed) {
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  for (unsigned long long i = blockIdx.x * static_cast<unsigned long long>(blockDim.x) + threadIdx.x; i < n;
       i += stride)
    data[i] = seed ^ static_cast<unsigned int>(i * 2654435761ull);
}

// *misses += the number of words i < n where data[i] is not seed ^ (i * 2654435761).
extern "C" __global__ void pattern_misses(const unsigned int* data, unsigned long long n, unsigned int seed,
                                          unsigned long long* misses) {
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  unsigned long long mine = 0;
  for (unsigned long long i = blockIdx.x * static_cast<unsigned long long>(blockDim.x) + threadIdx.x; i < n;
       i += stride)
    mine += data[i] != (seed ^ static_cast<unsigned int>(i * 2654435761ull));
  if (mine) atomicAdd(misses, mine);
}
//! [pattern]
