// Kernels for lesson 09 (streams and events). extern "C", so the host finds them by name.
//
// gate makes pending work deterministic without sleeping: one thread waits until the host writes
// a non-zero value to a word of pinned host memory, so the stream it runs in stays busy exactly
// as long as the host wants. It never waits forever: past its deadline it gives up and says so.
// stamp records the order in which kernels of different streams ran. burn does arithmetic for a
// chosen number of rounds, so a kernel can be made as long as a copy.

//! [gate]
// Waits until *gate != 0 or deadline_ns have passed (by the GPU's global nanosecond timer), then
// writes 1 ("released") or 2 ("timed out") to *outcome. gate and outcome live in pinned host
// memory; volatile makes every read go to that memory, where the host's write lands.
extern "C" __global__ void gate(const volatile unsigned int* gate, unsigned long long deadline_ns,
                                volatile unsigned int* outcome) {
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    if (*gate != 0) {
      *outcome = 1;
      return;
    }
    __nanosleep(1000);
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < deadline_ns);
  *outcome = 2;
}
//! [gate]

//! [stamp]
// Takes the next number from *counter and writes it to *slot: the order in which stamps ran.
extern "C" __global__ void stamp(unsigned int* counter, volatile unsigned int* slot) {
  *slot = atomicAdd(counter, 1u) + 1;
  __threadfence_system();
}
//! [stamp]

// data[i] = data[i] * 0.999 + 0.001, rounds times, for every i < n: work whose length the host
// chooses, over data it can check.
extern "C" __global__ void burn(float* data, unsigned int n, unsigned int rounds) {
  for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    float v = data[i];
    for (unsigned int r = 0; r < rounds; ++r) v = v * 0.999f + 0.001f;
    data[i] = v;
  }
}
