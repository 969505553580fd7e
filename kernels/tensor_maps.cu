// Kernels for lesson 21 (tensor maps). extern "C", so the host finds them by name.
//
// tma_load_box and tma_copy move boxes of a 2D float matrix with the Tensor Memory Accelerator: one
// thread hands a tensor map (encoded on the host by cuTensorMapEncodeTiled) and a box's coordinates
// to the TMA unit, which writes the box into shared memory and counts its bytes on an mbarrier that
// the block waits on. The map arrives as a `const __grid_constant__ CUtensorMap` parameter: the
// kernel uses its address in parameter space, never a copy. plain_load_box and plain_copy do the
// same with ordinary loads and stores, for the host to check the TMA kernels against.
//
// The PTX instructions (cp.async.bulk.tensor, mbarrier.arrive.expect_tx, mbarrier.try_wait.parity,
// fence.proxy.async) are sm_90's (PTX ISA 8.0), so the TMA bodies are compiled only where
// __CUDA_ARCH__ >= 900; on older architectures they trap, and the host never launches them there
// (it checks the device's compute capability first).
#include <cuda.h>  // CUtensorMap: the 128 bytes the host encoded

#include <stdint.h>

// The largest box the TMA kernels take, in floats: 64 x 64, 16 KiB of static shared memory.
constexpr int kTileFloats = 64 * 64;

// The 32-bit shared-memory address PTX instructions take for a pointer into this block's shared memory.
__device__ __forceinline__ unsigned sharedAddress(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

//! [tma-load]
// One box of the map's matrix, its corner at column x and row y (either may be negative or past
// the end: the TMA unit fills what lies outside as the map says), into tile. Thread 0 sets up the
// barrier, tells it how many bytes to expect and asks the TMA unit for the box; every thread then
// waits until the barrier has counted them all.
__device__ void loadBox(const CUtensorMap* map, int x, int y, float* tile, uint64_t* barrier,
                        unsigned bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  const unsigned bar = sharedAddress(barrier);
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared.b64 [%0], 1;" ::"r"(bar) : "memory");
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");  // the TMA unit sees the initialised barrier
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%2, %3}], [%4];"
        ::"r"(sharedAddress(tile)), "l"(map), "r"(x), "r"(y), "r"(bar) : "memory");
  }
  __syncthreads();  // nobody waits on the barrier before thread 0 has initialised it
  unsigned done = 0;
  while (!done)
    asm volatile("{\n\t.reg .pred p;\n\tmbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0;\n\t"
                 "selp.u32 %0, 1, 0, p;\n\t}"
                 : "=r"(done) : "r"(bar) : "memory");
#else
  __trap();  // no TMA before sm_90: the host never launches this there
#endif
}
//! [tma-load]

//! [tma-load-box]
// One block loads one box at (x, y) through the map and writes it to out, boxRows rows of boxCols
// floats, so the host can see what the TMA unit put in shared memory.
extern "C" __global__ void tma_load_box(const __grid_constant__ CUtensorMap map, int x, int y, int boxCols,
                                        int boxRows, float* out) {
  __shared__ __align__(128) float tile[kTileFloats];
  __shared__ __align__(8) uint64_t barrier;
  const int n = boxCols * boxRows;
  loadBox(&map, x, y, tile, &barrier, static_cast<unsigned>(n * sizeof(float)));
  for (int i = threadIdx.x; i < n; i += blockDim.x) out[i] = tile[i];
}
//! [tma-load-box]

//! [tma-copy]
// One block per box: load the box through from, store it through to at the same coordinates. The
// TMA unit writes only the part of a box that lies inside the destination's matrix.
extern "C" __global__ void tma_copy(const __grid_constant__ CUtensorMap from,
                                    const __grid_constant__ CUtensorMap to, int boxCols, int boxRows) {
  __shared__ __align__(128) float tile[kTileFloats];
  __shared__ __align__(8) uint64_t barrier;
  const int x = blockIdx.x * boxCols, y = blockIdx.y * boxRows;
  loadBox(&from, x, y, tile, &barrier, static_cast<unsigned>(boxCols * boxRows * sizeof(float)));
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if (threadIdx.x == 0) {
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%1, %2}], [%3];"
                 ::"l"(&to), "r"(x), "r"(y), "r"(sharedAddress(tile)) : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    // Wait for the whole store, not only its read of the tile (.read): its writes to global memory
    // are then done before the block ends.
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
  }
#endif
}
//! [tma-copy]

// The same box as tma_load_box, with ordinary loads: what lies outside the matrix (cols x rows,
// pitch floats from row to row) is 0, as the TMA unit's zero fill makes it.
extern "C" __global__ void plain_load_box(const float* matrix, unsigned long long pitch, int cols, int rows, int x,
                                          int y, int boxCols, int boxRows, float* out) {
  for (int i = threadIdx.x; i < boxCols * boxRows; i += blockDim.x) {
    const int c = x + i % boxCols, r = y + i / boxCols;
    out[i] = c >= 0 && c < cols && r >= 0 && r < rows ? matrix[static_cast<size_t>(r) * pitch + c] : 0.0f;
  }
}

// A copy with ordinary loads and stores: blocks of 32 x 8 threads, each block 32 columns by 32 rows,
// each thread one float per row it visits (a warp reads 128 contiguous bytes).
extern "C" __global__ void plain_copy(const float* from, unsigned long long fromPitch, float* to,
                                      unsigned long long toPitch, int cols, int rows) {
  const int x = blockIdx.x * 32 + threadIdx.x;
  if (x >= cols) return;
  const int end = min(rows, static_cast<int>(blockIdx.y + 1) * 32);
  for (int y = blockIdx.y * 32 + threadIdx.y; y < end; y += 8)
    to[static_cast<size_t>(y) * toPitch + x] = from[static_cast<size_t>(y) * fromPitch + x];
}
