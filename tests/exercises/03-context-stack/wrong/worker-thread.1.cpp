// Wrong (R1): carries the exception out correctly, but never makes ctx current in the worker, "the caller has it current"
//
// A new thread's stack is empty: the job sees no current context and its cuMemAlloc fails with
// CUDA_ERROR_INVALID_CONTEXT, so `seen->current == mine` and `seen->alloc == CUDA_SUCCESS` fail.
#include "exercises.hpp"

#include <exception>
#include <thread>

namespace ex03 {

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

}  // namespace ex03
