// Reference solution of lesson 03's exercise worker-thread (lessons/03-context-stack/exercises.cpp).
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
