// Reference solutions of lesson 11's exercises.
#include "exercises.hpp"

#include <stdexcept>
#include <string>

namespace ex11 {

namespace {

// Makes ctx current for the scope and pops it at the end, also when the scope is left by an
// exception: the thread's stack is then exactly as it was (lesson 11, step 6).
class ContextScope {
 public:
  explicit ContextScope(CUcontext ctx) { CU_CHECK(cuCtxPushCurrent(ctx)); }
  ~ContextScope() {
    CUcontext popped = nullptr;
    cuCtxPopCurrent(&popped);
  }
  ContextScope(const ContextScope&) = delete;
  ContextScope& operator=(const ContextScope&) = delete;
};

void rtCheck(cudaError_t rc, const char* what) {
  if (rc != cudaSuccess)
    throw std::runtime_error(std::string(what) + " failed: " + cudaGetErrorName(rc) + ": " + cudaGetErrorString(rc));
}

unsigned blocksFor(unsigned n) { return (n + 255) / 256; }

}  // namespace

// The stream names its context: the one that was current when the framework created it. The
// library works there whatever this thread has current (nothing, the primary context, another
// library's), and the push and pop leave the thread as it was. A CUkernel launched into a stream
// runs in the stream's context anyway; the push is for every other driver call a library makes
// around its launches (a copy, a memset, cuKernelGetFunction), which use the current context.
void scaleInStream(CUkernel scale, float* data, unsigned n, float factor, float offset, cudaStream_t stream) {
  CUcontext ctx = nullptr;
  CU_CHECK(cuStreamGetCtx(stream, &ctx));  // cudaStream_t is CUstream
  ContextScope in(ctx);
  if (n == 0) return;
  CUdeviceptr p = reinterpret_cast<CUdeviceptr>(data);  // one address space: the runtime's pointer is the driver's
  void* args[] = {&p, &factor, &offset, &n};             // in the order of scale's parameters
  CU_CHECK(cuLaunchKernel(reinterpret_cast<CUfunction>(scale), blocksFor(n), 1, 1, 256, 1, 1, 0, stream, args,
                          nullptr));
}

// cudaGetKernel gives the kernel's CUkernel, which belongs to no context: launched into a stream, it
// runs in the stream's context and is loaded there first if it has to be. A CUfunction from
// cudaGetFuncBySymbol would belong to the context current at the lookup, and only work there.
void addOneThroughDriver(float* data, unsigned n, cudaStream_t stream) {
  if (n == 0) return;
  cudaKernel_t kernel = nullptr;  // a cudaKernel_t is a CUkernel
  rtCheck(cudaGetKernel(&kernel, addOneEntry()), "cudaGetKernel(add_one)");
  void* args[] = {&data, &n};
  CU_CHECK(cuLaunchKernel(reinterpret_cast<CUfunction>(kernel), blocksFor(n), 1, 1, 256, 1, 1, 0, stream, args,
                          nullptr));
}

}  // namespace ex11
