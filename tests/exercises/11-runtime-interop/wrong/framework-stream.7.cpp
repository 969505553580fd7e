// Wrong (R5): pushes the tensor's context around the launch and pops it after CU_CHECK, so a failed launch leaves it pushed
//
// Lesson 11's "push on entry, pop on exit", with the context read from the memory's attributes; but
// the pop is a statement after the checked launch, and the exception of a failed launch skips it.
// When the check makes the launch fail, the thread's stack has one context more, and the check's
// `stackAfter == stackBefore` fails.
#include "exercises.hpp"

namespace ex11 {

void scaleInStream(CUkernel scale, float* data, unsigned n, float factor, float offset, cudaStream_t stream) {
  if (n == 0) return;
  CUdeviceptr p = reinterpret_cast<CUdeviceptr>(data);
  CUcontext owner = nullptr;
  CU_CHECK(cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_CONTEXT, p));
  CU_CHECK(cuCtxPushCurrent(owner));
  void* args[] = {&p, &factor, &offset, &n};
  CU_CHECK(cuLaunchKernel(reinterpret_cast<CUfunction>(scale), (n + 255) / 256, 1, 1, 256, 1, 1, 0, stream, args,
                          nullptr));
  CUcontext popped = nullptr;
  CU_CHECK(cuCtxPopCurrent(&popped));
}

}  // namespace ex11
