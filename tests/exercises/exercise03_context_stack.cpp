// The checks of lesson 03's exercises (lessons/03-context-stack/exercises.cpp). Every case starts
// and ends with an empty context stack on the calling thread, so a wrong answer that leaves a
// context behind spoils only its own check.
#include "check.hpp"
#include "03-context-stack/exercises.hpp"

#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace {

// What the check's work throws: no std::exception, so nothing but the check's own handler takes it.
struct Thrown {
  int tag;
};

// A context made with cuCtxCreate and taken off the stack at once, so the check decides what is on
// it; destroyed at scope exit.
class Context {
 public:
  explicit Context(CUdevice dev) {
    CU_CHECK(wb::createContext(&ctx_, 0, dev));
    CUcontext popped = nullptr;
    CU_CHECK(cuCtxPopCurrent(&popped));
  }
  ~Context() { cuCtxDestroy(ctx_); }
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
  CUcontext get() const { return ctx_; }

 private:
  CUcontext ctx_ = nullptr;
};

// Two contexts on device 0 for the cases that only push, pop and run work in them: a context costs
// about 0.1 s to create. Made on first use, destroyed at exit (before the driver's own exit handler,
// which cuInit registered earlier).
CUcontext shared(int which) {
  wbt::initDriver();
  static std::optional<Context> contexts[2];
  if (!contexts[which]) contexts[which].emplace(wbt::device(0));
  return contexts[which]->get();
}

// The calling thread's whole stack, bottom first. The API shows only the top, so it pops every
// context and pushes them back in order, as lesson 03 draws it. 64 is deeper than any case goes.
std::vector<CUcontext> drawStack() {
  std::vector<CUcontext> popped;
  CUcontext top = nullptr;
  for (int i = 0; i < 64 && cuCtxGetCurrent(&top) == CUDA_SUCCESS && top; ++i) {
    CU_CHECK(cuCtxPopCurrent(&top));
    popped.push_back(top);
  }
  std::vector<CUcontext> stack(popped.rbegin(), popped.rend());
  for (CUcontext ctx : stack) CU_CHECK(cuCtxPushCurrent(ctx));
  return stack;
}

// Empties the stack when made and again when the case ends, even when an assertion ended it.
struct EmptyStack {
  EmptyStack() { clear(); }
  ~EmptyStack() { clear(); }
  static void clear() {
    CUcontext top = nullptr;
    for (int i = 0; i < 64 && cuCtxGetCurrent(&top) == CUDA_SUCCESS && top; ++i) cuCtxPopCurrent(&top);
  }
};

// A stack for a failure message, naming the contexts the case knows: "[caller's mine]".
std::string drawn(const std::vector<CUcontext>& stack, CUcontext mine, CUcontext callers) {
  std::string s = "[";
  for (CUcontext c : stack)
    s += (s.size() > 1 ? " " : "") + (c == mine ? std::string("ctx") : c == callers ? "caller's" : wb::hex(c));
  return s + "]";
}

}  // namespace

EXERCISE("context-scope", "A scope guard that restores the context stack even when an exception leaves the scope",
         "cuCtxPushCurrent(ctx), then a small guard object whose destructor calls cuCtxPopCurrent (ignoring its "
         "result: a destructor must not throw while an exception unwinds), then work(). A cuCtxPopCurrent written "
         "after work() is skipped when work throws, and the context stays on the caller's stack.") {
  TEST_CASE("ctx is current in the work, and the stack is as before: empty, or holding the caller's context") {
    const CUcontext mine = shared(0), callers = shared(1);
    EmptyStack clean;
    CUcontext onEmpty = nullptr, onCallers = nullptr;
    ex03::withContext(mine, [&] { onEmpty = wbt::current(); });
    const std::string afterEmpty = drawn(drawStack(), mine, callers);
    CU_CHECK(cuCtxPushCurrent(callers));
    ex03::withContext(mine, [&] { onCallers = wbt::current(); });
    const std::string afterCallers = drawn(drawStack(), mine, callers);
    CHECK_MESSAGE(onEmpty == mine, "ctx was not current in the work");
    CHECK_MESSAGE(onCallers == mine, "ctx was not current in the work");
    CHECK(afterEmpty == "[]");
    CHECK(afterCallers == "[caller's]");
  }

  TEST_CASE("an exception from the work reaches the caller, and the stack is as before") {
    const CUcontext mine = shared(0), callers = shared(1);
    EmptyStack clean;
    CU_CHECK(cuCtxPushCurrent(callers));
    CUcontext inWork = nullptr;
    int caught = 0;
    try {
      ex03::withContext(mine, [&] {
        inWork = wbt::current();
        throw Thrown{7};
      });
    } catch (const Thrown& t) {  // the check's own type only: wb::NotDone goes on to the reporter
      caught = t.tag;
    }
    const std::string afterThrow = drawn(drawStack(), mine, callers);
    const int count = wbt::initDriver();
    CUresult driverCode = CUDA_SUCCESS;
    try {
      ex03::withContext(mine, [&] {
        CUdevice dev = 0;
        CU_CHECK(cuDeviceGet(&dev, count));  // fails: an ordinal past the last
      });
    } catch (const wb::DriverError& e) {
      driverCode = e.code();
    }
    const std::string afterDriverError = drawn(drawStack(), mine, callers);
    CHECK(inWork == mine);
    CHECK_MESSAGE(caught == 7, "the work's exception did not reach the caller");
    CHECK_MESSAGE(driverCode == CUDA_ERROR_INVALID_DEVICE, "the work's wb::DriverError did not reach the caller");
    CHECK(afterThrow == "[caller's]");
    CHECK(afterDriverError == "[caller's]");
  }
}

EXERCISE("worker-thread", "A worker thread that runs its job in the caller's context",
         "std::thread worker([&] { cuCtxPushCurrent(ctx); try { job(); } catch (...) { error = "
         "std::current_exception(); } cuCtxPopCurrent(&popped); }); worker.join(); then std::rethrow_exception "
         "if error is set. A new thread starts with an empty stack: the caller's current context is not there.") {
  TEST_CASE("the job runs on another thread with ctx current, allocates there, and the caller's stack is untouched") {
    const CUcontext mine = shared(0), callers = shared(1);
    EmptyStack clean;
    CU_CHECK(cuCtxPushCurrent(callers));
    // What the job saw, on the heap: a worker that outlived runInThread would still write to it safely.
    struct Seen {
      std::thread::id thread;
      CUcontext current = nullptr, owner = nullptr;
      CUresult alloc = CUDA_ERROR_UNKNOWN;
    };
    const auto seen = std::make_shared<Seen>();
    ex03::runInThread(mine, [seen] {
      seen->thread = std::this_thread::get_id();
      cuCtxGetCurrent(&seen->current);
      CUdeviceptr p = 0;
      seen->alloc = cuMemAlloc(&p, 1u << 20);
      if (seen->alloc == CUDA_SUCCESS) {
        cuPointerGetAttribute(&seen->owner, CU_POINTER_ATTRIBUTE_CONTEXT, p);
        cuMemFree(p);
      }
    });
    const std::string callerAfter = drawn(drawStack(), mine, callers);
    const bool ran = seen->thread != std::thread::id(), elsewhere = seen->thread != std::this_thread::get_id();
    CHECK_MESSAGE(ran, "the job did not run");
    CHECK_MESSAGE(elsewhere, "the job ran on the calling thread, not a new one");
    CHECK_MESSAGE(seen->current == mine, "ctx was not current in the worker thread");
    CHECK_MESSAGE(seen->alloc == CUDA_SUCCESS, "cuMemAlloc failed in the worker thread");
    CHECK(seen->owner == mine);
    CHECK(callerAfter == "[caller's]");
  }

  // In a child: an exception that leaves a std::thread's function calls std::terminate.
  TEST_CASE("child: an exception thrown by the job" * doctest::skip(!wbt::inChild())) {
    const int count = wbt::initDriver();
    wbt::RetainedPrimary primary(wbt::device(0));
    int caught = 0;
    try {
      ex03::runInThread(primary.get(), [] { throw Thrown{7}; });
    } catch (const Thrown& t) {
      caught = t.tag;
    }
    CUresult driverCode = CUDA_SUCCESS;
    try {
      ex03::runInThread(primary.get(), [count] {
        CUdevice dev = 0;
        CU_CHECK(cuDeviceGet(&dev, count));  // fails: an ordinal past the last
      });
    } catch (const wb::DriverError& e) {
      driverCode = e.code();
    }
    CHECK_MESSAGE(caught == 7, "the job's exception did not reach the caller");
    CHECK_MESSAGE(driverCode == CUDA_ERROR_INVALID_DEVICE, "the job's wb::DriverError did not reach the caller");
  }

  TEST_CASE("an exception thrown by the job reaches the caller of runInThread (in a child process)") {
    const wbx::ChildResult end = wbx::runInChild("child: an exception thrown by the job", 60);
    INFO("the child's output:\n" << end.output);
    CHECK_FALSE(end.timedOut);
    CHECK_FALSE_MESSAGE(end.crashed, "the child was killed: an exception left the worker thread (std::terminate)?");
    CHECK(end.code == 0);
  }
}

// cuMemGetInfo is device-wide: the exact equality holds while nothing else allocates on the GPU, so
// ctest runs this exercise with the GPU to itself (SERIAL_EXERCISES in lessons/CMakeLists.txt). The
// work allocates nothing: what is measured is the context itself, as lesson03.cost measures it.
EXERCISE("private-context", "A throw-away context that gives all its device memory back",
         "wb::createContext(&ctx, 0, dev) (it pushes ctx), then work(), then cuCtxDestroy(ctx), which pops it "
         "where it is current: in a guard's destructor, so it happens when work throws too. cuCtxPopCurrent alone "
         "frees nothing (lesson 03, step 4): the context and its memory stay until destroyed. Lesson 03, step 5 "
         "measures what a context costs.") {
  TEST_CASE("the work runs in a new context on dev, and free memory and the caller's stack are back as before, also when it throws") {
    wbt::initDriver();
    const CUdevice dev = wbt::device(0);
    wbt::RetainedPrimary app(dev);  // the application's context, as the runtime uses it
    EmptyStack clean;               // after app: the stack is emptied before app is released
    CU_CHECK(cuCtxPushCurrent(app.get()));
    const size_t before = wbt::freeMemory();
    CUcontext inWork = nullptr;
    CUdevice workDevice = -1;
    size_t inside = 0;
    ex03::withPrivateContext(dev, [&] {
      inWork = wbt::current();
      CU_CHECK(cuCtxGetDevice(&workDevice));
      inside = wbt::freeMemory();
    });
    const size_t after = wbt::freeMemory();
    const std::string stackAfter = drawn(drawStack(), nullptr, app.get());

    int caught = 0;
    try {
      ex03::withPrivateContext(dev, [] { throw Thrown{9}; });
    } catch (const Thrown& t) {  // the check's own type only: wb::NotDone goes on to the reporter
      caught = t.tag;
    }
    const size_t afterThrow = wbt::freeMemory();
    const std::string stackAfterThrow = drawn(drawStack(), nullptr, app.get());

    CHECK_MESSAGE(inWork != nullptr, "no context was current in the work");
    CHECK_MESSAGE(inWork != app.get(), "the work ran in the application's context, not one of its own");
    CHECK(workDevice == dev);
    CHECK_MESSAGE(inside < before, "no new context took device memory");
    CHECK(stackAfter == "[caller's]");
    const std::string freeBefore = wb::bytes(before), freeAfter = wb::bytes(after),
                      freeAfterThrow = wb::bytes(afterThrow);
    CAPTURE(freeBefore);
    CAPTURE(freeAfter);
    CAPTURE(freeAfterThrow);
    CHECK_MESSAGE(after == before, "free device memory did not come back: was the context destroyed, or only popped?");
    CHECK_MESSAGE(caught == 9, "the work's exception did not reach the caller");
    CHECK(stackAfterThrow == "[caller's]");
    CHECK_MESSAGE(afterThrow == before, "free device memory did not come back when the work threw");
  }
}
