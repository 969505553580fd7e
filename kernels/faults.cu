// Kernels for lessons 10 and 25: each fault on purpose, and the work the supervisor finishes.
// extern "C", so the host finds them by name. Every one of these faults runs in a child process.

#include <cassert>

//! [faults]
// Writes to an address that belongs to nothing: CUDA_ERROR_ILLEGAL_ADDRESS.
extern "C" __global__ void write_to(unsigned long long address) {
  *reinterpret_cast<volatile int*>(address) = 1;  // the faulting store
}

// Stops the kernel with a trap instruction.
extern "C" __global__ void trap_now() { __trap(); }

// A device-side assert that fails when value is not positive: CUDA_ERROR_ASSERT.
extern "C" __global__ void assert_positive(int value) { assert(value > 0); }

// Reads a 4-byte int from an address that is not a multiple of 4: CUDA_ERROR_MISALIGNED_ADDRESS.
extern "C" __global__ void read_misaligned(const char* bytes, int* out) {
  *out = *reinterpret_cast<const volatile int*>(bytes + 1);
}
//! [faults]

//! [stay]
// Lesson 25's fault: the same write, then the warp stays resident for up to stayNs. The CUDA-GDB
// manual: "If the warp exits after the instruction causing exception has executed, but before the
// exception has been recognized and reported, it may result in the exception not being reported",
// and a kernel that exits before it is recognized "may result in failure to generate the corefile".
// Bounded by the GPU's clock, so a fault that is never recognized cannot hang the child.
extern "C" __global__ void write_to_and_stay(unsigned long long address, unsigned long long stayNs) {
  unsigned long long start = 0, now = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  *reinterpret_cast<volatile int*>(address) = 1;  // the faulting store
  do asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  while (now - start < stayNs);
}
//! [stay]

//! [chunk]
// One chunk of the supervisor's job: adds k * k to *sum for every k in [first, first + n). With
// poison set it writes to address 0x10 first: a stand-in for a transient fault (a bad input, a
// flaky node), which the supervisor survives.
extern "C" __global__ void job_chunk(unsigned long long* sum, unsigned first, unsigned n, int poison) {
  if (poison && blockIdx.x == 0 && threadIdx.x == 0) *reinterpret_cast<volatile int*>(0x10ull) = 1;
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const unsigned long long v = static_cast<unsigned long long>(first + i) * (first + i);
    atomicAdd(sum, v);
  }
}
//! [chunk]
