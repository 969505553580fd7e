// Counters for lesson 08: one __managed__ variable that every context and device shares, and one
// __device__ variable of which every context has its own copy. The host finds both by name
// (cuLibraryGetManaged, cuLibraryGetGlobal). They sit at global scope, where C++ does not mangle a
// variable's name; one inside a named namespace would be mangled (as every C++ function name is).

//! [variables]
__managed__ unsigned long long managedCounter;
__device__ unsigned long long deviceCounter;
//! [variables]

// Each of the n threads adds 1 to both counters.
extern "C" __global__ void count(unsigned int n) {
  const unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    atomicAdd(&managedCounter, 1ull);
    atomicAdd(&deviceCounter, 1ull);
  }
}
