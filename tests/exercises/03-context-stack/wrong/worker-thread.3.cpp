// Wrong (R1 R5): makes ctx current in the calling thread with cuCtxSetCurrent before starting the worker, "the thread takes it along"
//
// Threads do not inherit contexts: the worker starts with an empty stack and the job sees none,
// while the caller's own context was replaced on its stack. `seen->current == mine` and
// `callerAfter == "[caller's]"` fail.
#include "exercises.hpp"

#include <exception>
#include <thread>

namespace ex03 {

void runInThread(CUcontext ctx, const std::function<void()>& job) {
  std::exception_ptr error;
  CU_CHECK(cuCtxSetCurrent(ctx));
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
