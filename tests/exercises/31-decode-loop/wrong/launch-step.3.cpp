// Wrong (R3): waits for the stream at the end "to be sure the row is written"
//
// cuStreamSynchronize on a stream that is being captured is refused and invalidates the capture: the
// step cannot be captured into a graph any more.
#include "exercises.hpp"

#include <utility>

namespace ex31 {

// The open first (its zeros must be there before the store writes row pos), then the ops ping-pong
// a -> b -> a ..., then the store of the last op's output into row pos. Every argument is copied by
// the driver at the launch (or at the capture), so locals are enough.
void launchStep(const Chain& c, unsigned pos, CUstream s) {
  unsigned n = c.n;
  if (pos % c.rowsPerBlock == 0) {
    CUdeviceptr block = c.cache + CUdeviceptr(pos) * n * sizeof(float);
    unsigned count = c.rowsPerBlock * n;
    void* args[] = {&block, &count};
    CU_CHECK(cuLaunchKernel(c.open, 1, 1, 1, kBlock, 1, 1, 0, s, args, nullptr));
  }
  CUdeviceptr src = c.a, dst = c.b;
  for (unsigned j = 0; j < c.ops; ++j) {
    void* args[] = {&dst, &src, &n, &pos};
    CU_CHECK(cuLaunchKernel(c.op, 1, 1, 1, kBlock, 1, 1, 0, s, args, nullptr));
    std::swap(src, dst);  // this op's output is the next one's input
  }
  CUdeviceptr row = c.cache + CUdeviceptr(pos) * n * sizeof(float);
  void* args[] = {&row, &src, &n};
  CU_CHECK(cuLaunchKernel(c.store, 1, 1, 1, kBlock, 1, 1, 0, s, args, nullptr));
  CU_CHECK(cuStreamSynchronize(s));
}

}  // namespace ex31
