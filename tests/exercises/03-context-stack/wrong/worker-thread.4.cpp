// Wrong (R4): makes ctx current before the try, so only the job's own exceptions are carried out
//
// "The push cannot fail." When it does (a context destroyed meanwhile, a device lost), its
// wb::DriverError leaves the thread's function and std::terminate ends the process. The check's
// child refuses the worker's cuCtxPushCurrent and is killed: `end.crashed` is true.
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

void runInThread(CUcontext ctx, const std::function<void()>& job) {
  std::exception_ptr error;
  std::thread worker([&] {
    CU_CHECK(cuCtxPushCurrent(ctx));
    PopAtExit pop;
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
