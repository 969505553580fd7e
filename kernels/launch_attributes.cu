// Kernels for lesson 28 (the launch attributes engines set). extern "C", so the host finds them by name.
//
// flood and probe measure what a stream's or a launch's priority changes: flood's blocks each hold
// an SM slot for a set time (by the GPU's nanosecond timer, not by arithmetic whose length varies),
// probe notes when its one block began. read_sum reads a buffer once, summing it, and notes when
// its first block began and its last block ended: the rate of one pass over a hot buffer, from L2
// or from DRAM. publish and consume hand a value from one kernel to another across memory
// synchronization domains, with the fence the reference asks for there.

__device__ __forceinline__ unsigned long long nowNs() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

//! [flood-kernels]
// Every block waits block_ns by the timer, then leaves. span[0] gets the earliest block start,
// span[1] the latest block end; *started (pinned) is set by the first block to begin, so the host
// knows the flood is on the device.
extern "C" __global__ void flood(unsigned long long block_ns, unsigned long long* span,
                                  volatile unsigned* started) {
  const unsigned long long start = nowNs();
  if (threadIdx.x == 0) {
    atomicMin(&span[0], start);
    *started = 1;
  }
  while (nowNs() - start < block_ns) {
  }
  __syncthreads();
  if (threadIdx.x == 0) atomicMax(&span[1], nowNs());
}

// One block: notes when it began, and counts itself.
extern "C" __global__ void probe(unsigned long long* began, unsigned* ran) {
  if (threadIdx.x == 0) {
    *began = nowNs();
    atomicAdd(ran, 1u);
  }
}
//! [flood-kernels]

//! [read-sum]
// One pass over n4 float4s, grid-stride; the sum goes to *sum (atomically, per block). span[0] gets
// the earliest block start, span[1] the latest block end (both set to 0 and ~0 by the host first:
// span[0] = ~0, span[1] = 0).
extern "C" __global__ void read_sum(const float4* data, unsigned long long n4, float* sum,
                                     unsigned long long* span) {
  __shared__ float partial[32];
  if (threadIdx.x == 0) atomicMin(&span[0], nowNs());
  float s = 0.f;
  for (unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += gridDim.x * blockDim.x) {
    const float4 v = data[i];
    s += (v.x + v.y) + (v.z + v.w);
  }
  for (int offset = 16; offset > 0; offset /= 2) s += __shfl_down_sync(0xffffffffu, s, offset);
  if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = s;
  __syncthreads();
  if (threadIdx.x == 0) {
    float block = 0.f;
    for (unsigned w = 0; w < blockDim.x / 32; ++w) block += partial[w];
    atomicAdd(sum, block);
    atomicMax(&span[1], nowNs());
  }
}
//! [read-sum]

//! [publish-consume]
// The producer: writes value, then a system-scope fence, then raises the flag. A fence of gpu scope
// would order the two writes only for kernels of its own memory synchronization domain.
extern "C" __global__ void publish(volatile int* data, volatile int* flag, int value) {
  *data = value;
  __threadfence_system();
  *flag = 1;
}

// The consumer: waits for the flag (at most deadline_ns), fences, then reads the value into *seen;
// *outcome 1 when the flag came, 2 when it gave up.
extern "C" __global__ void consume(const volatile int* data, const volatile int* flag,
                                   unsigned long long deadline_ns, int* seen, unsigned* outcome) {
  const unsigned long long start = nowNs();
  while (*flag == 0) {
    if (nowNs() - start > deadline_ns) {
      *outcome = 2;
      return;
    }
  }
  __threadfence_system();
  *seen = *data;
  *outcome = 1;
}
//! [publish-consume]
