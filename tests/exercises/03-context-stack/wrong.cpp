// Deliberately wrong variants of lesson 03's exercises: each check must fail on them.
#include "exercises.hpp"

#include <exception>
#include <thread>

namespace ex03 {

// Wrong: push, work, pop, written in that order. When work throws, the pop is skipped and ctx stays
// on the caller's stack above its own context: the check's `afterThrow == "[caller's]"` fails.
void withContext(CUcontext ctx, const std::function<void()>& work) {
  CU_CHECK(cuCtxPushCurrent(ctx));
  work();
  CUcontext popped = nullptr;
  CU_CHECK(cuCtxPopCurrent(&popped));
}

// Wrong: carries the exception out correctly, but never pushes ctx in the worker, "the caller has it
// current". The worker's stack is empty: the job sees no current context and its cuMemAlloc fails
// with CUDA_ERROR_INVALID_CONTEXT, so `seen->current == mine` and `seen->alloc == CUDA_SUCCESS` fail.
void runInThread(CUcontext ctx, const std::function<void()>& job) {
  (void)ctx;
  std::exception_ptr error;
  std::thread worker([&] {
    try {
      job();
    } catch (...) {
      error = std::current_exception();
    }
  });
  worker.join();
  if (error) std::rethrow_exception(error);
}

// Wrong: pops the context instead of destroying it, "popping releases it". The stack comes back
// right, even when work throws, but the context and its device memory stay: the check's
// `after == before` fails by what a context costs.
void withPrivateContext(CUdevice dev, const std::function<void()>& work) {
  CUcontext ctx = nullptr;
  CU_CHECK(wb::createContext(&ctx, 0, dev));
  struct PopAtExit {
    ~PopAtExit() {
      CUcontext popped = nullptr;
      cuCtxPopCurrent(&popped);
    }
  } pop;
  work();
}

}  // namespace ex03
