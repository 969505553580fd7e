// Kernels for lesson 23 (unified memory). extern "C", so the host finds them by name.
//
// They work on words of managed memory, device memory or, where the device may access it, memory
// the host allocated itself: the kernel does not know which, and that is the point. fill writes a
// pattern the host can check, add changes every word in place, and sum reads every byte once and
// adds it up, which is the "streaming" kernel of the lesson's figure: its time is the time to
// bring the bytes to the SMs, from wherever they are.

//! [managed-total]
// A __managed__ variable, as in lesson 08: the same managed memory cuMemAllocManaged gives, with a
// name. cuLibraryGetManaged finds it; the sum kernel can add into it.
__managed__ unsigned long long managedTotal;
//! [managed-total]

// data[i] = seed + i (mod 2^32) for every i < n.
extern "C" __global__ void um_fill(unsigned int* data, unsigned long long n, unsigned int seed) {
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  for (unsigned long long i = blockIdx.x * static_cast<unsigned long long>(blockDim.x) + threadIdx.x; i < n;
       i += stride)
    data[i] = seed + static_cast<unsigned int>(i);
}

// data[i] += delta for every i < n: a read and a write of every word.
extern "C" __global__ void um_add(unsigned int* data, unsigned long long n, unsigned int delta) {
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  for (unsigned long long i = blockIdx.x * static_cast<unsigned long long>(blockDim.x) + threadIdx.x; i < n;
       i += stride)
    data[i] += delta;
}

//! [sum]
// *total += the sum of the n4 * 4 words at data, read 16 bytes at a time by every thread of a grid
// that strides over the whole range: each byte is read once. Each warp adds its threads' sums and
// one atomic per warp adds that to *total.
extern "C" __global__ void um_sum(const uint4* data, unsigned long long n4, unsigned long long* total) {
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  unsigned long long mine = 0;
  for (unsigned long long i = blockIdx.x * static_cast<unsigned long long>(blockDim.x) + threadIdx.x; i < n4;
       i += stride) {
    const uint4 v = data[i];
    mine += static_cast<unsigned long long>(v.x) + v.y + v.z + v.w;
  }
  for (int offset = 16; offset > 0; offset /= 2) mine += __shfl_down_sync(0xffffffffu, mine, offset);
  if ((threadIdx.x & 31) == 0) atomicAdd(total, mine);
}
//! [sum]
