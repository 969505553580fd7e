// Lesson 03's claims about the context stack, threads, and what contexts cost and give back.
#include "support.hpp"

#include <future>
#include <optional>
#include <thread>

namespace {

// Creates a context and takes it off the stack again, so tests control the stack themselves.
class Unpushed : public wbt::OwnedContext {
 public:
  explicit Unpushed(CUdevice dev) : OwnedContext(dev) {
    CUcontext popped = nullptr;
    CU_CHECK(cuCtxPopCurrent(&popped));
    REQUIRE(popped == get());
  }
};

// Two created contexts, off the stack, shared by the cases that only push, pop and set them: each
// case leaves the stack empty, and a context costs about 0.1 s to create, which a learner running
// `ctest -R lesson03` again and again should not pay once per case. Made on first use, destroyed at
// exit, before the driver's own exit handler (registered earlier, at cuInit, so it runs later).
const Unpushed& shared(int which) {
  wbt::initDriver();
  static std::optional<Unpushed> contexts[2];
  if (!contexts[which]) contexts[which].emplace(wbt::device(0));
  return *contexts[which];
}

}  // namespace

TEST_SUITE("stack") {
  TEST_CASE("cuCtxCreate pushes the new context, so it is current at once") {
    wbt::initDriver();
    REQUIRE(wbt::current() == nullptr);
    wbt::OwnedContext a(wbt::device(0));
    CHECK(wbt::current() == a.get());
    wbt::OwnedContext b(wbt::device(0));
    CHECK(wbt::current() == b.get());
    CUcontext popped = nullptr;
    CHECK(cuCtxPopCurrent(&popped) == CUDA_SUCCESS);
    CHECK(popped == b.get());
    CHECK(wbt::current() == a.get());  // the pop uncovered the context below
  }

  TEST_CASE("two contexts on one device have different handles and ids, and the same device") {
    const Unpushed &a = shared(0), &b = shared(1);
    CHECK(a.get() != b.get());
    unsigned long long idA = 0, idB = 0;
    CHECK(cuCtxGetId(a.get(), &idA) == CUDA_SUCCESS);
    CHECK(cuCtxGetId(b.get(), &idB) == CUDA_SUCCESS);
    CHECK(idA != idB);
    for (CUcontext ctx : {a.get(), b.get()}) {
      wbt::Pushed scope(ctx);
      CUdevice dev = -1;
      CHECK(cuCtxGetDevice(&dev) == CUDA_SUCCESS);
      CHECK(dev == wbt::device(0));
    }
  }

  TEST_CASE("push stacks, pop uncovers, cuCtxSetCurrent replaces the top instead of pushing") {
    const Unpushed &a = shared(0), &b = shared(1);
    REQUIRE(wbt::current() == nullptr);
    CHECK(cuCtxPushCurrent(a.get()) == CUDA_SUCCESS);
    CHECK(cuCtxPushCurrent(b.get()) == CUDA_SUCCESS);  // [A B]
    CHECK(cuCtxSetCurrent(a.get()) == CUDA_SUCCESS);   // [A A]
    CHECK(wbt::current() == a.get());
    CUcontext popped = nullptr;
    CHECK(cuCtxPopCurrent(&popped) == CUDA_SUCCESS);
    CHECK(popped == a.get());
    CHECK(wbt::current() == a.get());  // B is gone from the stack: it was replaced, not covered
    CHECK(cuCtxPopCurrent(&popped) == CUDA_SUCCESS);
    CHECK(wbt::current() == nullptr);
  }

  TEST_CASE("popping an empty stack is CUDA_ERROR_INVALID_CONTEXT; asking for the current context is not an error") {
    wbt::initDriver();
    CUcontext ctx = reinterpret_cast<CUcontext>(0x1);
    CHECK(cuCtxGetCurrent(&ctx) == CUDA_SUCCESS);
    CHECK(ctx == nullptr);
    CUcontext popped = nullptr;
    CHECK(cuCtxPopCurrent(&popped) == CUDA_ERROR_INVALID_CONTEXT);
  }

  TEST_CASE("cuCtxSetCurrent(nullptr) on a one-context stack empties it") {
    const Unpushed& a = shared(0);
    REQUIRE(wbt::current() == nullptr);
    CHECK(cuCtxSetCurrent(a.get()) == CUDA_SUCCESS);
    CHECK(wbt::current() == a.get());
    CHECK(cuCtxSetCurrent(nullptr) == CUDA_SUCCESS);
    CHECK(wbt::current() == nullptr);
  }
}

TEST_SUITE("threads") {
  TEST_CASE("a new thread starts with an empty stack: contexts are not inherited") {
    const Unpushed& a = shared(0);
    wbt::Pushed scope(a.get());
    REQUIRE(wbt::current() == a.get());
    CUcontext seen = reinterpret_cast<CUcontext>(0x1);
    CUresult rc = CUDA_ERROR_UNKNOWN;
    std::thread([&] { rc = cuCtxGetCurrent(&seen); }).join();
    CHECK(rc == CUDA_SUCCESS);
    CHECK(seen == nullptr);
  }

  TEST_CASE("one context is current in two threads at the same time") {
    const Unpushed& a = shared(0);
    wbt::Pushed scope(a.get());
    std::promise<CUcontext> pushedThere;
    std::promise<void> mainLooked;
    std::thread worker([&] {
      CUcontext mine = nullptr;
      cuCtxPushCurrent(a.get());
      cuCtxGetCurrent(&mine);
      pushedThere.set_value(mine);
      mainLooked.get_future().wait();  // stay current until the main thread has looked
      cuCtxPopCurrent(&mine);
    });
    const CUcontext inWorker = pushedThere.get_future().get();
    const CUcontext inMain = wbt::current();
    mainLooked.set_value();
    worker.join();
    CHECK(inWorker == a.get());
    CHECK(inMain == a.get());
  }

  TEST_CASE("a context pushed in one thread is not current in another") {
    const Unpushed& a = shared(0);
    REQUIRE(wbt::current() == nullptr);
    std::thread([&] {
      cuCtxPushCurrent(a.get());
      CUcontext popped = nullptr;
      cuCtxPopCurrent(&popped);
    }).join();
    CHECK(wbt::current() == nullptr);
    std::promise<void> pushed, checked;
    std::thread holder([&] {
      cuCtxPushCurrent(a.get());
      pushed.set_value();
      checked.get_future().wait();
      CUcontext popped = nullptr;
      cuCtxPopCurrent(&popped);
    });
    pushed.get_future().wait();
    CHECK(wbt::current() == nullptr);  // while it is current over there
    checked.set_value();
    holder.join();
  }
}

TEST_SUITE("myths") {
  TEST_CASE("popping a context frees nothing: its allocation stays valid and usable after a push") {
    wbt::initDriver();
    wbt::OwnedContext a(wbt::device(0));
    CUdeviceptr buffer = 0;
    REQUIRE(cuMemAlloc(&buffer, 4096) == CUDA_SUCCESS);
    const unsigned value = 0xC0FFEEu;
    CHECK(cuMemcpyHtoD(buffer, &value, sizeof value) == CUDA_SUCCESS);
    CUcontext popped = nullptr;
    REQUIRE(cuCtxPopCurrent(&popped) == CUDA_SUCCESS);
    REQUIRE(wbt::current() == nullptr);

    CUcontext owner = nullptr;
    CHECK(cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_CONTEXT, buffer) == CUDA_SUCCESS);
    CHECK(owner == a.get());
    CUdeviceptr base = 0;
    size_t size = 0;
    CHECK(cuPointerGetAttribute(&base, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, buffer) == CUDA_SUCCESS);
    CHECK(base == buffer);
    CHECK(cuPointerGetAttribute(&size, CU_POINTER_ATTRIBUTE_RANGE_SIZE, buffer) == CUDA_SUCCESS);
    CHECK(size >= 4096);

    wbt::Pushed again(a.get());
    unsigned readBack = 0;
    CHECK(cuMemcpyDtoH(&readBack, buffer, sizeof readBack) == CUDA_SUCCESS);
    CHECK(readBack == value);
    CHECK(cuMemFree(buffer) == CUDA_SUCCESS);
  }

  TEST_CASE("one thread holds several contexts, allocates in each, and every allocation names its owner") {
    wbt::initDriver();
    Unpushed a(wbt::device(0)), b(wbt::device(0)), c(wbt::device(0));
    std::vector<std::pair<CUcontext, CUdeviceptr>> made;
    for (CUcontext ctx : {a.get(), b.get(), c.get()}) {
      wbt::Pushed scope(ctx);
      CUdeviceptr p = 0;
      REQUIRE(cuMemAlloc(&p, 1024) == CUDA_SUCCESS);
      made.emplace_back(ctx, p);
    }
    for (const auto& [ctx, p] : made) {
      CUcontext owner = nullptr;
      CHECK(cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_CONTEXT, p) == CUDA_SUCCESS);
      CHECK(owner == ctx);
      wbt::Pushed scope(ctx);
      CHECK(cuMemFree(p) == CUDA_SUCCESS);
    }
  }
}

// Leaves an allocation for cuCtxDestroy to take back, on purpose: compute-sanitizer's leak check
// counts that as a leak, so the sanitize target runs every suite but the reclaim ones.
TEST_SUITE("reclaim") {
  TEST_CASE("a context takes device memory, and cuCtxDestroy gives it back with the cuMemAlloc allocation left in it") {
    wbt::initDriver();
    wbt::OwnedContext meter(wbt::device(0));  // cuMemGetInfo needs a current context
    const size_t before = wbt::freeMemory();
    const size_t leftBehind = 256u << 20;
    size_t during = 0;
    {
      wbt::OwnedContext c(wbt::device(0));
      CUdeviceptr p = 0;
      REQUIRE(cuMemAlloc(&p, leftBehind) == CUDA_SUCCESS);  // never freed by hand
      during = wbt::freeMemory();
      CHECK(during + leftBehind < before);  // the allocation and the context itself both took memory
      c.destroy();
      REQUIRE(wbt::current() == meter.get());
    }
    const size_t after = wbt::freeMemory();
    CHECK(after > during + leftBehind);  // the allocation came back, and more: the context's own memory
  }
}

// cuMemGetInfo is device-wide: ctest runs this suite alone (SERIAL_SUITES in lessons/CMakeLists.txt),
// but a process that ended just before may still be giving its memory back, so "all of it back" is
// after >= before, not equality (once, free memory rose 4 MiB across exercise 03's same measurement).
// Another process allocating at the same time can still break it.
TEST_SUITE("cost") {
  TEST_CASE("an empty context takes device memory and cuCtxDestroy gives all of it back (with the GPU to itself)") {
    wbt::initDriver();
    wbt::OwnedContext meter(wbt::device(0));
    const size_t before = wbt::freeMemory();
    wbt::OwnedContext c(wbt::device(0));
    const size_t during = wbt::freeMemory();
    c.destroy();
    const size_t after = wbt::freeMemory();
    CHECK(during < before);
    CHECK(after >= before);
  }

  TEST_CASE("cuCtxDestroy of the current context pops it; of another, leaves the stack alone") {
    wbt::initDriver();
    Unpushed other(wbt::device(0));
    wbt::OwnedContext a(wbt::device(0));
    wbt::OwnedContext b(wbt::device(0));  // [A B]
    other.destroy();
    CHECK(wbt::current() == b.get());
    b.destroy();
    CHECK(wbt::current() == a.get());
  }
}
