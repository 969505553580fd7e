// Kernels for lesson 24: device-side printf, whose output goes through a FIFO of fixed size
// (CU_LIMIT_PRINTF_FIFO_SIZE) that the host empties only at the points the programming guide lists.
// extern "C", so the host finds them by name.
#include <cstdio>

//! [print-lines]
// Thread i prints line i of the run tagged run (one line each, lines in all), and keeps what printf
// returned in returned[i]: the number of arguments it parsed, or a negative number on an error.
extern "C" __global__ void print_lines(int run, int lines, int* returned) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < lines) returned[i] = printf("printf run %d line %d\n", run, i);
}
//! [print-lines]
