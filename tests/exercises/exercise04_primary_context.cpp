// The checks of lesson 04's exercises (lessons/04-primary-context/exercises.cpp). Whether the
// primary context is alive is read from the driver (cuDevicePrimaryCtxGetState) and from an
// allocation made in it, which dies with the context; every check releases what the code under
// test left retained, so the next one starts from an inactive primary context.
#include "check.hpp"
#include "04-primary-context/exercises.hpp"

#include <exception>
#include <memory>
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

}  // namespace

EXERCISE("primary-handle", "A retain/release handle for the primary context whose count is right after copies and moves",
         "Constructor: cuDevicePrimaryCtxRetain(&ctx_, dev); destructor: cuDevicePrimaryCtxRelease(dev_) if ctx_ "
         "is set. A copy retains again, a move takes ctx_ and sets the source's to nullptr, and an assignment "
         "releases what the target held. The compiler's copy and move copy the pointer but not the retain: each "
         "is one release too many.") {
  // The handle's members are called outside the assertions, so one still not done reports "not done".
  TEST_CASE("a copy holds a retain of its own: the context outlives the original and goes with the last copy") {
    wbt::initDriver();
    const CUdevice dev = wbt::device(0);
    LeaveClean clean{dev};
    const CUcontext currentBefore = wbt::current();
    auto original = std::make_unique<ex04::PrimaryContext>(dev);
    const CUcontext ctx = original->get();
    const CUdevice reported = original->device();
    const CUcontext currentAfter = wbt::current();
    REQUIRE_MESSAGE(ctx != nullptr, "get() returned nullptr for a handle that was just made");
    CHECK_MESSAGE(currentAfter == currentBefore, "making a handle changed the current context: retaining makes nothing current");
    CHECK(reported == dev);
    CHECK(active(dev));
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
    }
    const int leaked = releaseLeftovers(dev);  // retains still held: the primary context should be inactive
    CAPTURE(leaked);
    CHECK_MESSAGE(leaked == 0, "every handle has gone and the primary context is still active: a retain was leaked");
  }

  TEST_CASE("a move hands the retain over, a moved-from handle releases nothing, and self-assignment keeps it") {
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
    ex04::PrimaryContext moved(std::move(*first));
    const CUcontext movedTo = moved.get(), movedFrom = first->get();
    CHECK(movedTo == ctx);
    CHECK_MESSAGE(movedFrom == nullptr, "a moved-from handle must hold nothing");
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
    }
    const int leaked = releaseLeftovers(dev);  // retains still held: the primary context should be inactive
    CAPTURE(leaked);
    CHECK_MESSAGE(leaked == 0, "every handle has gone and the primary context is still active: a retain was leaked");
  }
}

EXERCISE("any-thread", "An allocation in the primary context from any thread, whatever is current there",
         "cuDevicePrimaryCtxRetain gives you the handle without making it current; cuCtxPushCurrent it, cuMemAlloc, "
         "cuCtxPopCurrent, then cuDevicePrimaryCtxRelease (the caller's retain keeps the memory alive). "
         "cuCtxSetCurrent replaces the caller's current context, and cuCtxSetCurrent(nullptr) does not put it back; "
         "allocating in whatever context is current puts the memory in the caller's context, not the primary one.") {
  TEST_CASE("from new threads with no current context: the memory is in the primary context and the threads end with none current") {
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

  TEST_CASE("with the caller's own context current: the memory still goes to the primary context and the caller's context stays current") {
    wbt::initDriver();
    const CUdevice dev = wbt::device(0);
    LeaveClean clean{dev};
    {
      wbt::RetainedPrimary primary(dev);
      wbt::OwnedContext mine(dev);  // pushed onto the empty stack: the caller's current context
      Allocation allocation;
      allocation.p = ex04::allocateInPrimary(dev, 1u << 20);
      const CUcontext currentAfter = wbt::current();
      CUcontext popped = nullptr;
      const CUresult pop = cuCtxPopCurrent(&popped);
      const CUcontext below = wbt::current();
      CHECK_MESSAGE(ownerOf(allocation.p) == primary.get(), "the memory is not in the primary context");
      CHECK_MESSAGE(currentAfter == mine.get(), "the caller's own context is no longer current");
      CHECK(pop == CUDA_SUCCESS);
      CHECK_MESSAGE(below == nullptr, "a context was left on the stack under the caller's");
    }
    const int leaked = releaseLeftovers(dev);  // retains still held: the primary context should be inactive
    CAPTURE(leaked);
    CHECK_MESSAGE(leaked == 0, "the caller released its retain and the primary context is still active: a retain was leaked");
  }
}
