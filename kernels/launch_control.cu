// Kernels for lesson 16 (launch control). extern "C", so the host finds them by name.
//
// smem_sum needs as much dynamic shared memory as the host gives it (the 48 KiB default and beyond);
// stage needs an amount that grows with the block size (the occupancy exercise); where and hold
// report the SM each block ran on, hold also keeping its whole block resident until the host
// opens a gate (green contexts); grid_sum synchronises its whole grid with a barrier of its own
// (cooperative launch); cluster_shape reads back its thread-block cluster (compute capability 9.0).
//
// The fatbin holds machine code for sm_75 to sm_90 and PTX of compute_90, so what only sm_90 has
// (clusters) is compiled only where __CUDA_ARCH__ >= 900; the host checks the device before it asks.

// The SM the calling thread runs on. The PTX ISA: %smid may change during execution (a block can be
// preempted and resumed elsewhere), and SM ids need not be contiguous: compare sets, not ranges.
__device__ __forceinline__ unsigned int smId() {
  unsigned int id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  return id;
}

__device__ __forceinline__ unsigned long long nowNs() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

//! [smem-sum]
// Every block copies the n words of in into its dynamic shared memory (the launch gives it n * 4
// bytes or more) and sums them there: out[blockIdx.x] = the sum. The per-warp partial sums are
// static shared memory, which CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES reports. __launch_bounds__: never
// more than 256 threads per block, in whole warps.
extern "C" __global__ void __launch_bounds__(256)
    smem_sum(const unsigned int* in, unsigned int n, unsigned int* out) {
  extern __shared__ unsigned int staged[];
  __shared__ unsigned int perWarp[256 / 32];
  for (unsigned int i = threadIdx.x; i < n; i += blockDim.x) staged[i] = in[i];
  __syncthreads();
  unsigned int sum = 0;
  for (unsigned int i = threadIdx.x; i < n; i += blockDim.x) sum += staged[i];
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
  if (threadIdx.x % 32 == 0) perWarp[threadIdx.x / 32] = sum;
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned int total = 0;
    for (unsigned int w = 0; w < blockDim.x / 32; ++w) total += perWarp[w];
    out[blockIdx.x] = total;
  }
}
//! [smem-sum]

// Each thread keeps floatsPerThread floats in dynamic shared memory (the launch gives the block
// blockDim.x * floatsPerThread * 4 bytes): thread t of the block writes in[i] + k for k = 0, 1, ...
// (i its element), the block synchronises, and out[i] = the sum of the values of thread
// (t + 1) % blockDim.x. Elements past n contribute 0.0f per value and are not written.
extern "C" __global__ void stage(const float* in, float* out, unsigned int n, unsigned int floatsPerThread) {
  extern __shared__ float row[];
  const unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
  float* mine = row + threadIdx.x * floatsPerThread;
  for (unsigned int k = 0; k < floatsPerThread; ++k) mine[k] = i < n ? in[i] + static_cast<float>(k) : 0.0f;
  __syncthreads();
  const float* next = row + ((threadIdx.x + 1) % blockDim.x) * floatsPerThread;
  float sum = 0.0f;
  for (unsigned int k = 0; k < floatsPerThread; ++k) sum += next[k];
  if (i < n) out[i] = sum;
}

//! [where]
// smOf[blockIdx.x] = the SM the block ran on.
extern "C" __global__ void where(volatile unsigned int* smOf) {
  if (threadIdx.x == 0) smOf[blockIdx.x] = smId();
}
//! [where]

//! [hold]
// Thread 0 of every block notes the block's SM, says it has arrived (state 1), and waits until the
// host writes a non-zero *gate or deadline_ns have passed; then it notes 2 (released) or 3 (timed
// out). The block's other threads wait at the barrier meanwhile, so the whole block, with all its
// threads, stays resident on its SM while thread 0 waits. gate, state and smOf live in pinned host
// memory: the host reads them while the kernel runs.
extern "C" __global__ void hold(const volatile unsigned int* gate, unsigned long long deadline_ns,
                                volatile unsigned int* state, volatile unsigned int* smOf) {
  if (threadIdx.x == 0) {
    smOf[blockIdx.x] = smId();
    __threadfence_system();
    state[blockIdx.x] = 1;
    __threadfence_system();
    const unsigned long long start = nowNs();
    unsigned int outcome = 3;
    do {
      if (*gate != 0) {
        outcome = 2;
        break;
      }
      __nanosleep(1000);
    } while (nowNs() - start < deadline_ns);
    state[blockIdx.x] = outcome;
    __threadfence_system();
  }
  __syncthreads();
}
//! [hold]

//! [grid-sum]
// The sum of n words: each block stores its share's sum in partial[block]; a barrier over the grid;
// then every block adds up all of partial into out[block]. At the barrier thread 0 of each block
// counts itself in sync[0] and waits for every block; a block that is not resident cannot count
// itself in, so only a grid whose blocks are all resident at once (a cooperative launch) gets past.
// Past deadline_ns a waiting block gives up and counts itself in sync[1] instead of hanging.
extern "C" __global__ void grid_sum(const unsigned int* in, unsigned int n, volatile unsigned int* partial,
                                    unsigned int* sync, unsigned long long deadline_ns, unsigned int* out) {
  __shared__ unsigned int perWarp[32];
  __shared__ bool gaveUp;
  unsigned int sum = 0;
  for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    sum += in[i];
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
  if (threadIdx.x % 32 == 0) perWarp[threadIdx.x / 32] = sum;
  __syncthreads();
  //! [grid-sum]

  //! [grid-sum-barrier]
  if (threadIdx.x == 0) {
    unsigned int blockSum = 0;
    for (unsigned int w = 0; w < blockDim.x / 32; ++w) blockSum += perWarp[w];
    partial[blockIdx.x] = blockSum;
    __threadfence();  // the partial sum is visible to every block before this block counts itself in
    atomicAdd(&sync[0], 1u);
    const unsigned long long start = nowNs();
    gaveUp = false;
    while (atomicAdd(&sync[0], 0u) < gridDim.x) {
      if (nowNs() - start > deadline_ns) {
        gaveUp = true;
        atomicAdd(&sync[1], 1u);
        break;
      }
    }
    __threadfence();
  }
  __syncthreads();
  //! [grid-sum-barrier]
  if (threadIdx.x == 0) {
    unsigned int total = 0;
    for (unsigned int b = 0; b < gridDim.x; ++b) total += partial[b];
    out[blockIdx.x] = gaveUp ? 0u : total;
  }
}

//! [cluster-shape]
// For each block, four words: the number of blocks in its cluster, its rank in the cluster, the
// cluster's index (x) in the grid, and the SM it ran on. Clusters exist from compute capability 9.0:
// compiled for anything older, the kernel reports 0 blocks per cluster.
extern "C" __global__ void cluster_shape(unsigned int* out) {
  if (threadIdx.x != 0) return;
  unsigned int blocks = 0, rank = 0, cluster = 0;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(blocks));
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  asm volatile("mov.u32 %0, %%clusterid.x;" : "=r"(cluster));
#endif
  unsigned int* mine = out + 4 * blockIdx.x;
  mine[0] = blocks;
  mine[1] = rank;
  mine[2] = cluster;
  mine[3] = smId();
}
//! [cluster-shape]
