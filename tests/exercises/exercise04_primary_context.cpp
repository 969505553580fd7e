// The checks of lesson 04's exercises (lessons/04-primary-context/exercises.cpp). Whether the
// primary context is alive is read from the driver (cuDevicePrimaryCtxGetState) and from an
// allocation made in it, which dies with the context; every check releases what the code under
// test left retained, so the next one starts from an inactive primary context. Each case's name
// begins with the requirements it verifies.
#include "check.hpp"
#include "04-primary-context/exercises.hpp"

#include <exception>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

bool active(CUdevice dev) {
  unsigned flags = 0;
  int isActive = 0;
  CU_CHECK(cuDevicePrimaryCtxGetState(dev, &flags, &isActive));
  return isActive != 0;
}

// Releases the retains that code under test left behind, until the primary context is inactive,
// and says how many there were.
int releaseLeftovers(CUdevice dev) {
  int released = 0;
  while (active(dev) && released < 1000 && cuDevicePrimaryCtxRelease(dev) == CUDA_SUCCESS) ++released;
  return released;
}

// At scope exit: empties the thread's context stack and releases leftover retains, even when an
// assertion ended the test early.
struct LeaveClean {
  CUdevice dev;
  ~LeaveClean() {
    CUcontext top = nullptr, popped = nullptr;
    for (int i = 0; i < 16 && cuCtxGetCurrent(&top) == CUDA_SUCCESS && top; ++i) cuCtxPopCurrent(&popped);
    releaseLeftovers(dev);
  }
};

// One allocation made in ctx. It lives exactly as long as the context, so it shows whether the
// last retain went too early. Freed while the context lives; a destroyed context took it along.
class Witness {
 public:
  explicit Witness(CUcontext ctx) : ctx_(ctx) {
    wbt::Pushed in(ctx);
    CU_CHECK(cuMemAlloc(&p_, 4096));
  }
  ~Witness() { release(); }
  Witness(const Witness&) = delete;
  Witness& operator=(const Witness&) = delete;
  bool alive() const {
    CUcontext owner = nullptr;
    return p_ && cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_CONTEXT, p_) == CUDA_SUCCESS && owner == ctx_;
  }
  void release() {
    if (alive()) {
      wbt::Pushed in(ctx_);
      cuMemFree(p_);
    }
    p_ = 0;
  }

 private:
  CUcontext ctx_;
  CUdeviceptr p_ = 0;
};

// The context that owns p, or nullptr when the driver knows no such allocation.
CUcontext ownerOf(CUdeviceptr p) {
  CUcontext owner = nullptr;
  if (!p || cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_CONTEXT, p) != CUDA_SUCCESS) return nullptr;
  return owner;
}

// A pointer from the code under test, freed at scope exit in whichever context owns it.
struct Allocation {
  CUdeviceptr p = 0;
  ~Allocation() {
    if (const CUcontext owner = ownerOf(p)) {
      wbt::Pushed in(owner);
      cuMemFree(p);
    }
  }
};

// The calling thread's context stack (wbx::contextStack, top first) as text for a failure message:
// "[caller's]" names the caller's own context, any other by its handle.
std::string drawn(CUcontext callers) {
  std::string s = "[";
  for (CUcontext c : wbx::contextStack()) s += (s.size() > 1 ? " " : "") + (c == callers ? std::string("caller's") : wb::hex(c));
  return s + "]";
}

// What happened when the call that makes the primary context current was refused: whether the
// refusal was handed out, and the code the function threw as wb::DriverError (CUDA_SUCCESS: none).
struct Refused {
  bool fired = false;
  CUresult thrown = CUDA_SUCCESS;
};

// Runs call with the call that makes a context current refused (CUDA_ERROR_INVALID_CONTEXT, without
// reaching the driver): cuCtxPushCurrent, or, for code that never pushed, cuCtxSetCurrent. Where the
// first was not called, call ran in full. call must not clean up itself: the check's own push would
// be refused.
template <typename F>
Refused refuseEntering(F call) {
  for (const char* entry : {"cuCtxPushCurrent", "cuCtxSetCurrent"}) {
    Refused r;
    {
      wbx::FailCall refuse(entry, CUDA_ERROR_INVALID_CONTEXT);
      try {
        call();
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

EXERCISE("primary-handle", "A retain/release handle for the primary context whose count is right after copies and moves",
         "Constructor: CU_CHECK(cuDevicePrimaryCtxRetain(&ctx_, dev)); destructor: cuDevicePrimaryCtxRelease(dev_) "
         "if ctx_ is set, and nothing else. A copy retains again (not when the source is empty), a move takes ctx_ "
         "and dev_ and sets the source's ctx_ to nullptr, and an assignment takes the new retain before it "
         "releases what the target held. The compiler's copy and move copy the pointer but not the retain: each "
         "is one release too many.") {
  // The handle's members are called outside the assertions, so one still not done reports "not done".
  TEST_CASE("R3 R5 R6: a move hands the retain over, a moved-from handle releases nothing, and self-assignment, by copy or by move, keeps it") {
    wbt::initDriver();
    const CUdevice dev = wbt::device(0);
    LeaveClean clean{dev};
    auto first = std::make_unique<ex04::PrimaryContext>(dev);
    const CUcontext ctx = first->get();
    REQUIRE_MESSAGE(ctx != nullptr, "get() returned nullptr for a handle that was just made");
    Witness witness(ctx);
    const ex04::PrimaryContext& same = *first;
    *first = same;  // self-assignment of the only holder
    const CUcontext selfAssigned = first->get();
    CHECK_MESSAGE(witness.alive(), "assigning the only handle to itself released the context");
    CHECK(selfAssigned == ctx);
    ex04::PrimaryContext& alias = *first;
    *first = std::move(alias);  // self-move-assignment of the only holder, through a second name
    const CUcontext selfMoved = first->get();
    CHECK_MESSAGE(witness.alive(), "move-assigning the only handle to itself released the context");
    CHECK_MESSAGE(selfMoved == ctx, "move-assigning a handle to itself emptied it");
    ex04::PrimaryContext moved(std::move(*first));
    const CUcontext movedTo = moved.get(), movedFrom = first->get();
    CHECK(movedTo == ctx);
    CHECK_MESSAGE(movedFrom == nullptr, "a moved-from handle must hold nothing");
    {
      ex04::PrimaryContext copyOfEmpty(*first);  // a copy of a handle that holds nothing holds nothing
      const CUcontext copiedEmpty = copyOfEmpty.get();
      CHECK_MESSAGE(copiedEmpty == nullptr, "a copy of an empty handle must be empty");
    }
    first.reset();
    CHECK_MESSAGE(witness.alive(), "destroying a moved-from handle released the retain it had handed over");
    {
      ex04::PrimaryContext target(dev);  // a second holder, whose own retain the assignment must give back
      target = std::move(moved);
      const CUcontext assigned = target.get(), assignedFrom = moved.get();
      CHECK(assigned == ctx);
      CHECK_MESSAGE(assignedFrom == nullptr, "a moved-from handle must hold nothing");
      CHECK(witness.alive());
      witness.release();
      // Move-assigned an empty handle, a holder gives back what it held.
      target = std::move(moved);
      const CUcontext assignedEmpty = target.get();
      CHECK_MESSAGE(assignedEmpty == nullptr, "a handle move-assigned an empty handle must be empty");
    }
    const int leaked = releaseLeftovers(dev);  // retains still held: the primary context should be inactive
    CAPTURE(leaked);
    CHECK_MESSAGE(leaked == 0, "every handle has gone and the primary context is still active: a retain was leaked");
  }

  TEST_CASE("R1 R2 R6 R7: a copy holds a retain of its own: the context outlives the original and goes with the last copy") {
    wbt::initDriver();
    const CUdevice dev = wbt::device(0);
    LeaveClean clean{dev};
    wbt::OwnedContext mine(dev);  // the caller's own context, current: no handle may change that
    auto original = std::make_unique<ex04::PrimaryContext>(dev);
    const CUcontext ctx = original->get();
    const CUdevice reported = original->device();
    const CUcontext currentAfter = wbt::current();
    REQUIRE_MESSAGE(ctx != nullptr, "get() returned nullptr for a handle that was just made");
    CHECK_MESSAGE(currentAfter == mine.get(), "making a handle changed the current context: retaining makes nothing current");
    CHECK(reported == dev);
    CHECK(active(dev));
    {
      wbt::RetainedPrimary primary(dev);  // the driver's own answer, given back at once
      CHECK_MESSAGE(ctx == primary.get(), "get() is not dev's primary context");
    }
    Witness witness(ctx);
    {
      ex04::PrimaryContext copy(*original);
      const CUcontext copied = copy.get();
      CHECK(copied == ctx);
      original.reset();
      CHECK_MESSAGE(witness.alive(), "the original's destructor destroyed the context its copy still holds: the copy did not retain");
      ex04::PrimaryContext another(dev);
      another = copy;  // two holders of the same context, one assigned to the other
      const CUcontext assigned = another.get();
      CHECK(assigned == ctx);
      CHECK_MESSAGE(witness.alive(), "copy-assignment left the context with fewer retains than holders");
      witness.release();
      // A handle assigned an empty one gives back what it held and holds nothing.
      ex04::PrimaryContext source(dev);
      const ex04::PrimaryContext taker(std::move(source));
      another = source;
      const CUcontext assignedEmpty = another.get();
      CHECK_MESSAGE(assignedEmpty == nullptr, "a handle copy-assigned an empty handle must be empty");
    }
    const std::string stackAfter = drawn(mine.get());
    CHECK_MESSAGE(stackAfter == "[caller's]", "the handles changed the caller's context stack: a handle makes nothing current and clears nothing");
    const int leaked = releaseLeftovers(dev);  // retains still held: the primary context should be inactive
    CAPTURE(leaked);
    CHECK_MESSAGE(leaked == 0, "every handle has gone and the primary context is still active: a retain was leaked");

  }

  TEST_CASE("R1: a device that does not exist: the constructor throws the driver's refusal and holds nothing") {
    const int count = wbt::initDriver();
    const CUdevice dev = wbt::device(0);
    LeaveClean clean{dev};
    const wbx::Holdings before = wbx::holdings();
    bool made = false;
    CUresult refused = CUDA_SUCCESS;
    try {
      ex04::PrimaryContext none(static_cast<CUdevice>(count));  // one past the last device's handle
      made = true;
    } catch (const wb::DriverError& e) {  // the course's error only: wb::NotDone goes on to the reporter
      refused = e.code();
    }
    const std::string left = wbx::holdings().differenceFrom(before);
    CHECK_MESSAGE(!made, "a handle was made for a device that does not exist");
    CHECK_MESSAGE(refused != CUDA_SUCCESS, "the retain's refusal must reach the caller as wb::DriverError");
    CHECK(left == "");
  }

  // A handle on device 1 names device 1 after copies and moves, and gives back device 1's retains.
  TEST_CASE("R4 R6: handles of device 1 name device 1 after copies and moves, and give back device 1's retains") {
    wbx::needDevices(2);  // one GPU: this case reports itself skipped, the rest still count
    wbt::initDriver();
    const CUdevice dev = wbt::device(0), dev1 = wbt::device(1);
    LeaveClean clean{dev}, clean1{dev1};
    CUdevice copiedDevice = -1, copyAssignedDevice = -1, movedDevice = -1, assignedDevice = -1;
    {
      ex04::PrimaryContext first(dev1);
      ex04::PrimaryContext copy(first);
      copiedDevice = copy.device();
      ex04::PrimaryContext copyTarget(dev);
      copyTarget = first;
      copyAssignedDevice = copyTarget.device();
      ex04::PrimaryContext moved(std::move(first));
      movedDevice = moved.device();
      ex04::PrimaryContext target(dev);
      target = std::move(moved);
      assignedDevice = target.device();
    }
    const int leaked0 = releaseLeftovers(dev), leaked1 = releaseLeftovers(dev1);
    CHECK(copiedDevice == dev1);
    CHECK(copyAssignedDevice == dev1);
    CHECK(movedDevice == dev1);
    CHECK(assignedDevice == dev1);
    CHECK_MESSAGE(leaked0 == 0, "device 0's primary context is still active after handles of devices 0 and 1 went");
    CHECK_MESSAGE(leaked1 == 0, "device 1's primary context is still active after every handle of it went");
  }

  // In a child: an exception that leaves a destructor calls std::terminate. The release fails as it
  // does for a handle destroyed at the process's exit, after the driver has been torn down.
  TEST_CASE("child: a handle whose release fails" * doctest::skip(!wbt::inChild())) {
    wbt::initDriver();
    const CUdevice dev = wbt::device(0);
    LeaveClean clean{dev};
    auto handle = std::make_unique<ex04::PrimaryContext>(dev);
    bool fired = false;
    {
      wbx::FailCall fail("cuDevicePrimaryCtxRelease", CUDA_ERROR_DEINITIALIZED);
      handle.reset();  // a destructor that throws ends the process here
      fired = fail.fired();
    }
    CHECK_MESSAGE(fired, "the destructor made no cuDevicePrimaryCtxRelease");
  }

  TEST_CASE("R8: the destructor does not throw when its release fails (in a child process)") {
    const wbx::ChildResult end = wbx::runInChild("child: a handle whose release fails", 60);
    INFO("the child's output:\n" << end.output);
    CHECK_FALSE(end.timedOut);
    CHECK_FALSE_MESSAGE(end.crashed, "the child was killed: an exception left the destructor (std::terminate)?");
    CHECK(end.code == 0);
  }
}

EXERCISE("any-thread", "An allocation in the primary context from any thread, whatever is current there",
         "cuDevicePrimaryCtxRetain gives you the handle without making it current; cuCtxPushCurrent it, cuMemAlloc, "
         "cuCtxPopCurrent, then cuDevicePrimaryCtxRelease (the caller's retain keeps the memory alive), and on a "
         "failed push or allocation pop and release before you throw. cuCtxSetCurrent replaces the caller's current "
         "context, and cuCtxSetCurrent(nullptr) does not put it back; allocating in whatever context is current "
         "puts the memory in the caller's context, not the primary one.") {
  TEST_CASE("R1 R2 R3: from new threads with no current context: the memory is in the primary context and the threads end with none current") {
    wbt::initDriver();
    const CUdevice dev = wbt::device(0);
    LeaveClean clean{dev};
    {
      wbt::RetainedPrimary primary(dev);  // the caller's retain, as the task says
      constexpr int kThreads = 4;
      std::vector<Allocation> allocations(kThreads);
      std::vector<CUcontext> currentAfter(kThreads, nullptr);
      std::vector<std::exception_ptr> errors(kThreads);
      std::vector<std::thread> threads;
      for (int i = 0; i < kThreads; ++i)
        threads.emplace_back([&, i] {
          try {
            allocations[i].p = ex04::allocateInPrimary(dev, 1u << 20);
          } catch (...) {
            errors[i] = std::current_exception();  // carried to the test's thread and thrown there
          }
          cuCtxGetCurrent(&currentAfter[i]);
        });
      for (auto& t : threads) t.join();
      for (const auto& e : errors)
        if (e) std::rethrow_exception(e);
      for (int i = 0; i < kThreads; ++i) {
        CAPTURE(i);
        CHECK_MESSAGE(ownerOf(allocations[i].p) == primary.get(), "the memory is not in the primary context");
        CHECK_MESSAGE(currentAfter[i] == nullptr, "the thread was left with a current context");
      }
    }
    const int leaked = releaseLeftovers(dev);  // retains still held: the primary context should be inactive
    CAPTURE(leaked);
    CHECK_MESSAGE(leaked == 0, "the caller released its retain and the primary context is still active: a retain was leaked");
  }

  TEST_CASE("R1 R2 R3 R4: with the caller's own context current: the memory goes to the primary context, the stack stays, and a failure is thrown and leaves nothing") {
    wbt::initDriver();
    const CUdevice dev = wbt::device(0);
    LeaveClean clean{dev};
    wbt::OwnedContext mine(dev);  // pushed onto the empty stack: the caller's current context
    {
      wbt::RetainedPrimary primary(dev);  // the caller's retain, as the task says
      const wbx::Holdings before = wbx::holdings();
      {
        Allocation allocation;
        allocation.p = ex04::allocateInPrimary(dev, 1u << 20);
        const std::string stackAfter = drawn(mine.get());
        CHECK_MESSAGE(ownerOf(allocation.p) == primary.get(), "the memory is not in the primary context");
        CHECK_MESSAGE(stackAfter == "[caller's]", "the caller's stack changed: its own context must stay current, with nothing pushed or lost");
      }
      // A size no device has: the allocation is refused, and what was pushed and retained must go.
      CUresult refusal = CUDA_SUCCESS;
      try {
        ex04::allocateInPrimary(dev, size_t{1} << 50);
      } catch (const wb::DriverError& e) {  // the course's error only: wb::NotDone goes on to the reporter
        refusal = e.code();
      }
      const std::string stackAfterRefusal = drawn(mine.get());
      const std::string leftAfterRefusal = wbx::holdings().differenceFrom(before);
      CHECK_MESSAGE(refusal != CUDA_SUCCESS, "an allocation of 1 PiB must throw the driver's refusal");
      CHECK_MESSAGE(stackAfterRefusal == "[caller's]", "after a refused allocation the caller's stack changed: the primary context stayed pushed?");
      CHECK_MESSAGE(leftAfterRefusal == "", "after a refused allocation a retain (or memory) was kept");
      // The primary context cannot be made current: the refusal is thrown and nothing is kept.
      std::vector<Allocation> made(2);  // freed after the refusals: a call that was not refused allocated
      size_t attempt = 0;
      const Refused r = refuseEntering([&] { made[attempt++].p = ex04::allocateInPrimary(dev, 1u << 20); });
      made.clear();
      const std::string stackAfterEntering = drawn(mine.get());
      const std::string leftAfterEntering = wbx::holdings().differenceFrom(before);
      REQUIRE_MESSAGE(r.fired, "allocateInPrimary called neither cuCtxPushCurrent nor cuCtxSetCurrent: the primary context was never made current");
      CHECK_MESSAGE(r.thrown == CUDA_ERROR_INVALID_CONTEXT, "the refusal to make the primary context current must reach the caller");
      CHECK(stackAfterEntering == "[caller's]");
      CHECK_MESSAGE(leftAfterEntering == "", "after a refused push a retain was kept");
    }
    const int leaked = releaseLeftovers(dev);  // retains still held: the primary context should be inactive
    CAPTURE(leaked);
    CHECK_MESSAGE(leaked == 0, "the caller released its retain and the primary context is still active: a retain was leaked");
  }

  // dev, not the device of the caller's context: device 1's primary context, while a context of
  // device 0 is current.
  TEST_CASE("R1 R2 R3: device 1's primary context, while the caller's own context on device 0 is current") {
    wbx::needDevices(2);  // one GPU: this case reports itself skipped, the rest still count
    wbt::initDriver();
    const CUdevice dev1 = wbt::device(1);
    LeaveClean clean{wbt::device(0)}, clean1{dev1};
    wbt::OwnedContext mine(wbt::device(0));  // pushed onto the empty stack: the caller's current context
    {
      wbt::RetainedPrimary primary1(dev1);
      Allocation onDevice1;
      onDevice1.p = ex04::allocateInPrimary(dev1, 1u << 20);
      const std::string stackAfterDevice1 = drawn(mine.get());
      CHECK_MESSAGE(ownerOf(onDevice1.p) == primary1.get(), "asked for device 1, the memory is not in device 1's primary context");
      CHECK(stackAfterDevice1 == "[caller's]");
    }
    const int leaked1 = releaseLeftovers(dev1);
    CHECK_MESSAGE(leaked1 == 0, "device 1's primary context is still active after the caller released it: a retain was leaked");
  }
}
