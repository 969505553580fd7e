// Reference solutions of lesson 03's exercises.
#include "exercises.hpp"

#include <exception>
#include <thread>

namespace ex03 {

namespace {

// Pops at scope exit, by return or by exception. A destructor that throws while an exception
// unwinds ends the program, so the pop's result is only looked at, never thrown.
struct PopAtExit {
  ~PopAtExit() {
    CUcontext popped = nullptr;
    cuCtxPopCurrent(&popped);
  }
};

// Destroys at scope exit. cuCtxDestroy also pops the context where it is current, which gives the
// caller's stack back as it was.
struct DestroyAtExit {
  CUcontext ctx;
  ~DestroyAtExit() { cuCtxDestroy(ctx); }
};

}  // namespace

// Push, then a guard: from here on, every way out of the scope pops exactly what was pushed. The
// stack below ctx is never touched, so it comes back as the caller had it.
void withContext(CUcontext ctx, const std::function<void()>& work) {
  CU_CHECK(cuCtxPushCurrent(ctx));  // if this fails nothing was pushed, and there is nothing to pop
  PopAtExit pop;
  work();
}

// A new thread starts with an empty stack: the caller's current context is not there, so the worker
// pushes ctx itself (the same context may be current in several threads at once). An exception may
// not leave the thread's function (std::terminate), so it is carried out in an exception_ptr and
// rethrown in the caller after the join.
void runInThread(CUcontext ctx, const std::function<void()>& job) {
  std::exception_ptr error;
  std::thread worker([&] {
    try {
      CU_CHECK(cuCtxPushCurrent(ctx));
      PopAtExit pop;  // the worker's stack is empty again when the job is done
      job();
    } catch (...) {
      error = std::current_exception();
    }
  });
  worker.join();
  if (error) std::rethrow_exception(error);
}

// cuCtxCreate pushes the new context; cuCtxDestroy gives back its device memory and pops it. A pop
// alone would free nothing (the context and all it holds live until destroyed), and a probe run
// again and again would take that memory again on every run.
void withPrivateContext(CUdevice dev, const std::function<void()>& work) {
  CUcontext ctx = nullptr;
  CU_CHECK(wb::createContext(&ctx, 0, dev));
  DestroyAtExit destroy{ctx};
  work();
}

}  // namespace ex03
