// Wrong (R2 R3): detaches the worker instead of joining it, "so the caller can go on"
//
// The story says the caller goes on, and join() makes it wait. But the task asks runInThread to
// wait: the caller's next step (freeing what the job uploads from, using what it uploaded) may not
// begin before the job has finished, and a job's exception found later has no one to reach. The
// worker keeps what it needs by value, so nothing dangles; the check's `finishedOnReturn` fails,
// and in the child the job's exception does not reach the caller (`caught == 7`). Both are
// races the check cannot force: they fail unless the worker ran its whole job before runInThread's
// next statement, which a new thread does not do.
#include "exercises.hpp"

#include <exception>
#include <memory>
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
  const auto error = std::make_shared<std::exception_ptr>();
  std::thread worker([ctx, job, error] {
    try {
      CU_CHECK(cuCtxPushCurrent(ctx));
      PopAtExit pop;
      job();
    } catch (...) {
      *error = std::current_exception();
    }
  });
  worker.detach();
  if (*error) std::rethrow_exception(*error);
}

}  // namespace ex03
