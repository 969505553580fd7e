// Wrong (R3): lets the job's exception leave the worker thread, "join() will pass it on"
//
// std::thread does not carry exceptions: one that leaves the thread's function calls std::terminate
// and ends the process. The check's child, whose job throws, is killed: `end.crashed` is true.
#include "exercises.hpp"

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
  std::thread worker([&] {
    CU_CHECK(cuCtxPushCurrent(ctx));
    PopAtExit pop;
    job();
  });
  worker.join();
}

}  // namespace ex03
