// The checks of lesson 03's exercises (lessons/03-context-stack/exercises.cpp). Every case starts
// and ends with an empty context stack on the calling thread, so a wrong answer that leaves a
// context behind spoils only its own check. Each case's name begins with the requirements it
// verifies.
#include "check.hpp"
#include "03-context-stack/exercises.hpp"

#include <atomic>
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

// Free device memory on ctx's device, measured with ctx pushed for the moment: the caller's stack
// may be wrong (that is asserted separately), and the measurement must not depend on it.
size_t freeMemoryIn(CUcontext ctx) {
  wbt::Pushed in(ctx);
  return wbt::freeMemory();
}

// What happened when the call that makes ctx current was refused: whether the refusal was handed out,
// the code the function threw as wb::DriverError (CUDA_SUCCESS: none), and whether the work ran.
struct Refused {
  bool fired = false, ran = false;
  CUresult thrown = CUDA_SUCCESS;
};

// Runs call(ran) with the call that makes a context current refused (CUDA_ERROR_INVALID_CONTEXT,
// without reaching the driver): cuCtxPushCurrent, or, for code that never pushed, cuCtxSetCurrent.
// Where the first was not called, call ran in full: correct code comes back as it went in.
template <typename F>
Refused refuseEntering(F call) {
  for (const char* entry : {"cuCtxPushCurrent", "cuCtxSetCurrent"}) {
    Refused r;
    {
      wbx::FailCall refuse(entry, CUDA_ERROR_INVALID_CONTEXT);
      try {
        call(r.ran);
      } catch (const wb::DriverError& e) {  // the course's error only: wb::NotDone goes on to the reporter
        r.thrown = e.code();
      }
      r.fired = refuse.fired();
    }
    if (r.fired) return r;
  }
  return {};
}

}  // namespace

EXERCISE("context-scope", "A scope guard that restores the context stack even when an exception leaves the scope",
         "CU_CHECK(cuCtxPushCurrent(ctx)), then a small guard object whose destructor calls cuCtxPopCurrent (ignoring "
         "its result: a destructor must not throw while an exception unwinds), then work(). A cuCtxPopCurrent written "
         "after work() is skipped when work throws, and the context stays on the caller's stack; a guard made before "
         "the push pops the caller's own context when the push fails.") {
  TEST_CASE("R1 R2: ctx is current in the work, and the stack is as before: empty, holding the caller's context, or ctx itself") {
    const CUcontext mine = shared(0), callers = shared(1);
    EmptyStack clean;
    CUcontext onEmpty = nullptr, onCallers = nullptr;
    ex03::withContext(mine, [&] { onEmpty = wbt::current(); });
    const std::string afterEmpty = drawn(drawStack(), mine, callers);
    CU_CHECK(cuCtxPushCurrent(callers));
    ex03::withContext(mine, [&] { onCallers = wbt::current(); });
    const std::string afterCallers = drawn(drawStack(), mine, callers);
    CU_CHECK(cuCtxPushCurrent(mine));  // ctx already current: it must stay where the caller put it
    ex03::withContext(mine, [] {});
    const std::string afterAlreadyCurrent = drawn(drawStack(), mine, callers);
    CHECK_MESSAGE(onEmpty == mine, "ctx was not current in the work");
    CHECK_MESSAGE(onCallers == mine, "ctx was not current in the work");
    CHECK(afterEmpty == "[]");
    CHECK(afterCallers == "[caller's]");
    CHECK_MESSAGE(afterAlreadyCurrent == "[caller's ctx]", "with ctx already current, the caller's stack must still come back as it was");
  }

  TEST_CASE("R1 R3: an exception from the work reaches the caller, as its own type and code, and the stack is as before") {
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

  TEST_CASE("R4: when ctx cannot be made current, the refusal is thrown, the work does not run, and the caller's context stays") {
    const CUcontext mine = shared(0), callers = shared(1);
    EmptyStack clean;
    CU_CHECK(cuCtxPushCurrent(callers));
    const Refused r = refuseEntering([&](bool& ran) { ex03::withContext(mine, [&] { ran = true; }); });
    const std::string after = drawn(drawStack(), mine, callers);
    REQUIRE_MESSAGE(r.fired, "withContext called neither cuCtxPushCurrent nor cuCtxSetCurrent: ctx was never made current");
    CHECK_MESSAGE(r.thrown == CUDA_ERROR_INVALID_CONTEXT, "the refusal must reach the caller as wb::DriverError");
    CHECK_MESSAGE(!r.ran, "the work ran although ctx could not be made current");
    CHECK_MESSAGE(after == "[caller's]", "a push that failed pushed nothing: nothing of the caller's may be popped");
  }
}

EXERCISE("worker-thread", "A worker thread that runs its job in the caller's context",
         "std::thread worker([&] { try { CU_CHECK(cuCtxPushCurrent(ctx)); job(); cuCtxPopCurrent(&popped); } catch "
         "(...) { error = std::current_exception(); } }); worker.join(); then std::rethrow_exception if error is set. "
         "The push goes inside the try: its refusal must not leave the thread either. A new thread starts with an "
         "empty stack: the caller's current context is not there.") {
  TEST_CASE("R1 R2 R5: the job runs on another thread with ctx current, allocates there, and the caller's stack is untouched, also with ctx current in the caller") {
    const CUcontext mine = shared(0), callers = shared(1);
    EmptyStack clean;
    CU_CHECK(cuCtxPushCurrent(callers));
    // What the job saw, on the heap: a worker that outlived runInThread would still write to it safely.
    struct Seen {
      std::thread::id thread;
      CUcontext current = nullptr, owner = nullptr;
      CUresult alloc = CUDA_ERROR_UNKNOWN;
      std::atomic<bool> finished{false};  // atomic: a worker left running would write it while the check reads
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
      seen->finished = true;  // the job's last act: runInThread returns only after it
    });
    const bool finishedOnReturn = seen->finished.load();
    const std::string callerAfter = drawn(drawStack(), mine, callers);
    const bool ran = seen->thread != std::thread::id(), elsewhere = seen->thread != std::this_thread::get_id();
    CHECK_MESSAGE(ran, "the job did not run");
    CHECK_MESSAGE(finishedOnReturn, "runInThread returned before the job had finished: wait for the worker (join)");
    CHECK_MESSAGE(elsewhere, "the job ran on the calling thread, not a new one");
    CHECK_MESSAGE(seen->current == mine, "ctx was not current in the worker thread");
    CHECK_MESSAGE(seen->alloc == CUDA_SUCCESS, "cuMemAlloc failed in the worker thread");
    CHECK(seen->owner == mine);
    CHECK(callerAfter == "[caller's]");

    // ctx itself current in the calling thread: the task still asks for a thread of the job's own.
    CU_CHECK(cuCtxPushCurrent(mine));
    const auto ranOn = std::make_shared<std::thread::id>();
    ex03::runInThread(mine, [ranOn] { *ranOn = std::this_thread::get_id(); });
    const std::string callerAfterOwn = drawn(drawStack(), mine, callers);
    const bool ranElsewhere = *ranOn != std::thread::id() && *ranOn != std::this_thread::get_id();
    CHECK_MESSAGE(ranElsewhere, "with ctx current in the calling thread the job ran there, not on a new thread");
    CHECK(callerAfterOwn == "[caller's ctx]");
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
    // The worker's own call that makes ctx current, refused: an exception in the worker too.
    const Refused r = refuseEntering([&](bool& ran) { ex03::runInThread(primary.get(), [&] { ran = true; }); });
    CHECK_MESSAGE(caught == 7, "the job's exception did not reach the caller");
    CHECK_MESSAGE(driverCode == CUDA_ERROR_INVALID_DEVICE, "the job's wb::DriverError did not reach the caller");
    REQUIRE_MESSAGE(r.fired, "the worker called neither cuCtxPushCurrent nor cuCtxSetCurrent: ctx was never made current there");
    CHECK_MESSAGE(r.thrown == CUDA_ERROR_INVALID_CONTEXT, "the refusal to make ctx current in the worker did not reach the caller");
    CHECK_MESSAGE(!r.ran, "the job ran although ctx could not be made current");
  }

  TEST_CASE("R3 R4: an exception thrown by the job, or by making ctx current in the worker, reaches the caller (in a child process)") {
    const wbx::ChildResult end = wbx::runInChild("child: an exception thrown by the job", 60);
    INFO("the child's output:\n" << end.output);
    CHECK_FALSE(end.timedOut);
    CHECK_FALSE_MESSAGE(end.crashed, "the child was killed: an exception left the worker thread (std::terminate)?");
    CHECK(end.code == 0);
  }
}

// cuMemGetInfo is device-wide, so ctest runs this exercise with the GPU to itself (SERIAL_EXERCISES in
// lessons/CMakeLists.txt). Even so, another process may still be giving its memory back: once free
// memory was 4 MiB *higher* after the work than before. So the check asks that it came back (after >=
// before), never that it is equal: a context left behind holds hundreds of MiB, far more than that. The
// work allocates nothing: what is measured is the context itself, as lesson03.cost measures it. The
// ledger says the same without measuring: a context made and not destroyed is "1 context more".
EXERCISE("private-context", "A throw-away context that gives all its device memory back",
         "CU_CHECK(wb::createContext(&ctx, 0, dev)) (it pushes ctx), then work(), then cuCtxDestroy(ctx), which "
         "pops it where it is current: in a guard's destructor, so it happens when work throws too. "
         "cuCtxPopCurrent alone frees nothing (lesson 03, step 4): the context and its memory stay until "
         "destroyed; and after cuCtxDestroy a pop would take the caller's context. Lesson 03, step 5 measures "
         "what a context costs.") {
  TEST_CASE("R1 R2 R3 R4: the work runs in a new context on dev, and free memory and the caller's stack are back as before, also when it throws") {
    const CUdevice dev = wbt::deviceKeepingPrimary(0);
    wbt::RetainedPrimary app(dev);  // the application's context, as the runtime uses it
    EmptyStack clean;               // after app: the stack is emptied before app is released
    CU_CHECK(cuCtxPushCurrent(app.get()));
    const size_t before = freeMemoryIn(app.get());
    const wbx::Holdings held = wbx::holdings();
    CUcontext inWork = nullptr;
    CUdevice workDevice = -1;
    size_t inside = 0;
    ex03::withPrivateContext(dev, [&] {
      inWork = wbt::current();
      CU_CHECK(cuCtxGetDevice(&workDevice));
      inside = wbt::freeMemory();
    });
    const std::string stackAfter = drawn(drawStack(), nullptr, app.get()), left = wbx::holdings().differenceFrom(held);
    const size_t after = freeMemoryIn(app.get());

    int caught = 0;
    try {
      ex03::withPrivateContext(dev, [] { throw Thrown{9}; });
    } catch (const Thrown& t) {  // the check's own type only: wb::NotDone goes on to the reporter
      caught = t.tag;
    }
    const std::string stackAfterThrow = drawn(drawStack(), nullptr, app.get()),
                      leftAfterThrow = wbx::holdings().differenceFrom(held);
    const size_t afterThrow = freeMemoryIn(app.get());

    CHECK_MESSAGE(inWork != nullptr, "no context was current in the work");
    CHECK_MESSAGE(inWork != app.get(), "the work ran in the application's context, not one of its own");
    CHECK(workDevice == dev);
    CHECK_MESSAGE(inside < before, "no new context took device memory");
    CHECK(stackAfter == "[caller's]");
    CHECK_MESSAGE(left == "", "withPrivateContext kept what it made: was the context destroyed, or only popped?");
    const std::string freeBefore = wb::bytes(before), freeAfter = wb::bytes(after),
                      freeAfterThrow = wb::bytes(afterThrow);
    CAPTURE(freeBefore);
    CAPTURE(freeAfter);
    CAPTURE(freeAfterThrow);
    CHECK_MESSAGE(after >= before, "free device memory did not come back: was the context destroyed, or only popped?");
    CHECK_MESSAGE(caught == 9, "the work's exception did not reach the caller");
    CHECK(stackAfterThrow == "[caller's]");
    CHECK_MESSAGE(leftAfterThrow == "", "when the work threw, withPrivateContext kept what it made");
    CHECK_MESSAGE(afterThrow >= before, "free device memory did not come back when the work threw");

    // dev, not the device of the caller's context: device 1, while device 0's primary context is current.
    wbx::needDevices(2);
    const CUdevice dev1 = wbt::device(1);
    CUdevice onDevice1 = -1;
    ex03::withPrivateContext(dev1, [&] { CU_CHECK(cuCtxGetDevice(&onDevice1)); });
    const std::string stackAfterDevice1 = drawn(drawStack(), nullptr, app.get()),
                      leftAfterDevice1 = wbx::holdings().differenceFrom(held);
    CHECK_MESSAGE(onDevice1 == dev1, "asked for device 1, the work ran on another device");
    CHECK(stackAfterDevice1 == "[caller's]");
    CHECK_MESSAGE(leftAfterDevice1 == "", "the context on device 1 was not given back");
  }

  TEST_CASE("R5: when the context cannot be made, the refusal is thrown, the work does not run, and nothing is left") {
    const CUdevice dev = wbt::deviceKeepingPrimary(0);
    wbt::RetainedPrimary app(dev);
    EmptyStack clean;
    CU_CHECK(cuCtxPushCurrent(app.get()));
    const wbx::Holdings held = wbx::holdings();
    bool ran = false, fired = false;
    CUresult thrown = CUDA_SUCCESS;
    {
      wbx::FailCall refuse("cuCtxCreate", CUDA_ERROR_OUT_OF_MEMORY);  // as a device whose memory is full refuses
      try {
        ex03::withPrivateContext(dev, [&] { ran = true; });
      } catch (const wb::DriverError& e) {  // the course's error only: wb::NotDone goes on to the reporter
        thrown = e.code();
      }
      fired = refuse.fired();
    }
    const std::string stack = drawn(drawStack(), nullptr, app.get()), left = wbx::holdings().differenceFrom(held);
    REQUIRE_MESSAGE(fired, "withPrivateContext never called cuCtxCreate (wb::createContext): it made no context of its own");
    CHECK_MESSAGE(thrown == CUDA_ERROR_OUT_OF_MEMORY, "the refusal must reach the caller as wb::DriverError");
    CHECK_MESSAGE(!ran, "the work ran although no context was made for it: in the caller's context");
    CHECK(stack == "[caller's]");
    CHECK(left == "");
  }
}
