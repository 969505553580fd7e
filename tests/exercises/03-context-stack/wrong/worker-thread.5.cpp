// Wrong (R3): carries out only std::exception, as its what() in a std::runtime_error
//
// "exception_ptr is exotic; every error has a message." An exception of another type still leaves
// the thread (std::terminate), and a wb::DriverError comes back without its code. The check's
// child, whose job throws a type of its own, is killed: `end.crashed` is true.
#include "exercises.hpp"

#include <stdexcept>
#include <string>
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
  std::string error;
  bool failed = false;
  std::thread worker([&] {
    try {
      CU_CHECK(cuCtxPushCurrent(ctx));
      PopAtExit pop;
      job();
    } catch (const std::exception& e) {
      error = e.what();
      failed = true;
    }
  });
  worker.join();
  if (failed) throw std::runtime_error(error);
}

}  // namespace ex03
