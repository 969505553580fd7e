// Wrong (R1): runs the job on the calling thread when ctx is already current there, "no thread needed"
//
// The thread is there to make ctx current, so where it already is the thread looks like pure cost.
// But the task asks for a thread of the job's own (the caller may be a thread that must not block
// in the job, or hold thread-local state the job must not see): with ctx current in the calling
// thread the check's job runs there, and `ranElsewhere` fails.
#include "exercises.hpp"

#include <exception>
#include <thread>

namespace ex03 {

namespace {

struct PopAtExit {
  ~PopAtExit() {
    CUcontext popped = nullptr;
    cuCtxPopCurrent(&popped);
  }
};

}  // namespace

// A new thread starts with an empty stack: the caller's current context is not there, so the worker
// pushes ctx itself (the same context may be current in several threads at once). An exception may
// not leave the thread's function (std::terminate), the push's refusal included, so everything the
// worker does is inside the try: what it throws is carried out in an exception_ptr and rethrown in
// the caller after the join, as it was.
void runInThread(CUcontext ctx, const std::function<void()>& job) {
  CUcontext current = nullptr;
  if (cuCtxGetCurrent(&current) == CUDA_SUCCESS && current == ctx) {
    job();
    return;
  }
  std::exception_ptr error;
  std::thread worker([&] {
    try {
      CU_CHECK(cuCtxPushCurrent(ctx));
      PopAtExit pop;
      job();
    } catch (...) {
      error = std::current_exception();
    }
  });
  worker.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace ex03
