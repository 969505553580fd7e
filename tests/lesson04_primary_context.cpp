// Lesson 04's claims about the primary context. Every retain is matched by a release, and flags
// are put back, so the suite leaves the device as it found it (the last case checks that).
#include "support.hpp"

#include <algorithm>
#include <future>
#include <memory>
#include <thread>
#include <vector>

namespace {

struct State {
  unsigned flags = 0;
  int active = -1;
};

State state(CUdevice dev) {
  State s;
  CU_CHECK(cuDevicePrimaryCtxGetState(dev, &s.flags, &s.active));
  return s;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

TEST_SUITE("retain") {
  TEST_CASE("retaining activates the primary context but does not make it current") {
    wbt::initDriver();
    const CUdevice dev = wbt::device(0);
    REQUIRE(state(dev).active == 0);
    {
      wbt::RetainedPrimary primary(dev);
      CHECK(primary.get() != nullptr);
      CHECK(state(dev).active == 1);
      CHECK(wbt::current() == nullptr);
      CHECK(cuCtxSetCurrent(primary.get()) == CUDA_SUCCESS);
      CHECK(wbt::current() == primary.get());
      CHECK(cuCtxSetCurrent(nullptr) == CUDA_SUCCESS);
    }
    CHECK(state(dev).active == 0);
  }

  TEST_CASE("every retain returns the same handle, and only the last release deactivates it") {
    wbt::initDriver();
    const CUdevice dev = wbt::device(0);
    CUcontext first = nullptr, second = nullptr;
    REQUIRE(cuDevicePrimaryCtxRetain(&first, dev) == CUDA_SUCCESS);
    REQUIRE(cuDevicePrimaryCtxRetain(&second, dev) == CUDA_SUCCESS);
    CHECK(first == second);
    CHECK(cuDevicePrimaryCtxRelease(dev) == CUDA_SUCCESS);
    CHECK(state(dev).active == 1);  // one retain still outstanding
    CHECK(cuDevicePrimaryCtxRelease(dev) == CUDA_SUCCESS);
    CHECK(state(dev).active == 0);
  }

  TEST_CASE("releasing a primary context nobody retained is CUDA_ERROR_INVALID_CONTEXT") {
    wbt::initDriver();
    const CUdevice dev = wbt::device(0);
    REQUIRE(state(dev).active == 0);
    CHECK(cuDevicePrimaryCtxRelease(dev) == CUDA_ERROR_INVALID_CONTEXT);
  }
}

TEST_SUITE("threads") {
  TEST_CASE("threads retaining at the same moment all get the one handle") {
    wbt::initDriver();
    const CUdevice dev = wbt::device(0);
    wbt::RetainedPrimary mine(dev);
    constexpr int kThreads = 16;
    std::vector<CUcontext> handles(kThreads, nullptr);
    std::vector<CUresult> results(kThreads, CUDA_ERROR_UNKNOWN);
    std::promise<void> go;
    std::shared_future<void> start = go.get_future().share();
    std::vector<std::thread> threads;
    for (int i = 0; i < kThreads; ++i)
      threads.emplace_back([&, i] {
        start.wait();  // all threads retain together
        results[i] = cuDevicePrimaryCtxRetain(&handles[i], dev);
      });
    go.set_value();
    for (auto& t : threads) t.join();
    for (int i = 0; i < kThreads; ++i) {
      CHECK(results[i] == CUDA_SUCCESS);
      CHECK(handles[i] == mine.get());
      if (results[i] == CUDA_SUCCESS) cuDevicePrimaryCtxRelease(dev);
    }
  }

  TEST_CASE("a retain in one thread makes the context current in no thread") {
    wbt::initDriver();
    const CUdevice dev = wbt::device(0);
    CUcontext there = nullptr, currentThere = reinterpret_cast<CUcontext>(0x1);
    std::thread([&] {
      cuDevicePrimaryCtxRetain(&there, dev);
      cuCtxGetCurrent(&currentThere);
    }).join();
    CHECK(there != nullptr);
    CHECK(currentThere == nullptr);
    CHECK(wbt::current() == nullptr);
    CHECK(cuDevicePrimaryCtxRelease(dev) == CUDA_SUCCESS);  // a retain may be released from any thread
  }
}

TEST_SUITE("lifetime") {
  TEST_CASE("flags set while the primary context is inactive are what it is activated with") {
    wbt::initDriver();
    const CUdevice dev = wbt::device(0);
    REQUIRE(state(dev).active == 0);
    const unsigned original = state(dev).flags;
    REQUIRE(cuDevicePrimaryCtxSetFlags(dev, CU_CTX_SCHED_BLOCKING_SYNC) == CUDA_SUCCESS);
    CHECK((state(dev).flags & CU_CTX_SCHED_MASK) == CU_CTX_SCHED_BLOCKING_SYNC);
    CHECK(state(dev).active == 0);  // setting flags activates nothing
    {
      wbt::RetainedPrimary primary(dev);
      wbt::Pushed current(primary.get());
      unsigned flags = 0;
      CHECK(cuCtxGetFlags(&flags) == CUDA_SUCCESS);
      CHECK((flags & CU_CTX_SCHED_MASK) == CU_CTX_SCHED_BLOCKING_SYNC);
    }
    CHECK(cuDevicePrimaryCtxSetFlags(dev, original) == CUDA_SUCCESS);
    CHECK(state(dev).flags == original);
  }

  TEST_CASE("reset deactivates a retained primary context; the retain must still be released") {
    wbt::initDriver();
    const CUdevice dev = wbt::device(0);
    CUcontext primary = nullptr;
    REQUIRE(cuDevicePrimaryCtxRetain(&primary, dev) == CUDA_SUCCESS);
    REQUIRE(state(dev).active == 1);
    CHECK(cuDevicePrimaryCtxReset(dev) == CUDA_SUCCESS);
    CHECK(state(dev).active == 0);
    CHECK(cuDevicePrimaryCtxRelease(dev) == CUDA_SUCCESS);  // reset did not release it
    CHECK(cuDevicePrimaryCtxRelease(dev) == CUDA_ERROR_INVALID_CONTEXT);  // and now nobody holds it
  }
}

// Leaves allocations for a release or a reset to take back, on purpose: compute-sanitizer's leak
// check counts that as a leak, so the sanitize target runs every suite but the reclaim ones.
TEST_SUITE("reclaim") {
  TEST_CASE("the last release frees the primary context's memory") {
    wbt::initDriver();
    const CUdevice dev = wbt::device(0);
    wbt::OwnedContext meter(dev);
    const size_t before = wbt::freeMemory();
    size_t whileActive = 0;
    {
      wbt::RetainedPrimary primary(dev);
      wbt::Pushed current(primary.get());
      CUdeviceptr p = 0;
      REQUIRE(cuMemAlloc(&p, 64u << 20) == CUDA_SUCCESS);  // left for the release to take back
      whileActive = wbt::freeMemory();
    }
    CHECK(whileActive < before);
    CHECK(wbt::freeMemory() > whileActive);
    CHECK(state(dev).active == 0);
  }

  TEST_CASE("reset destroys the allocations of a retained primary context; the retain is still released") {
    wbt::initDriver();
    const CUdevice dev = wbt::device(0);
    wbt::RetainedPrimary primary(dev);
    CUdeviceptr p = 0;
    {
      wbt::Pushed current(primary.get());
      REQUIRE(cuMemAlloc(&p, 1u << 20) == CUDA_SUCCESS);
    }
    CUcontext owner = nullptr;
    REQUIRE(cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_CONTEXT, p) == CUDA_SUCCESS);
    CHECK(cuDevicePrimaryCtxReset(dev) == CUDA_SUCCESS);
    CHECK(cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_CONTEXT, p) != CUDA_SUCCESS);
    // RetainedPrimary's destructor releases: reset did not.
  }
}

TEST_SUITE("cost") {
  TEST_CASE("retaining the active primary context again is far cheaper than cuCtxCreate") {
    wbt::initDriver();
    const CUdevice dev = wbt::device(0);
    wbt::RetainedPrimary primary(dev);
    // Retains are timed three times (the median), as one could be slowed by the scheduler; a
    // cuCtxCreate once: nothing makes building a whole context fast, and each one takes a while.
    std::vector<double> retainMs;
    for (int i = 0; i < 3; ++i) {
      CUcontext again = nullptr;
      wb::Stopwatch r;
      REQUIRE(cuDevicePrimaryCtxRetain(&again, dev) == CUDA_SUCCESS);
      retainMs.push_back(r.ms());
      cuDevicePrimaryCtxRelease(dev);
    }
    wb::Stopwatch c;
    const double createMs = [&c, dev] {
      wbt::OwnedContext created(dev);
      return c.ms();
    }();
    MESSAGE("median retain " << median(retainMs) << " ms, cuCtxCreate " << createMs << " ms");
    CHECK(median(retainMs) * 10 < createMs);
  }

  TEST_CASE("N retains of the primary context take less memory than one cuCtxCreate, N contexts take N times more") {
    wbt::initDriver();
    const CUdevice dev = wbt::device(0);
    wbt::RetainedPrimary primary(dev);
    wbt::Pushed current(primary.get());
    constexpr int kN = 3;
    const size_t start = wbt::freeMemory();
    for (int i = 0; i < kN; ++i) {
      CUcontext again = nullptr;
      REQUIRE(cuDevicePrimaryCtxRetain(&again, dev) == CUDA_SUCCESS);
    }
    const size_t afterRetains = wbt::freeMemory();
    for (int i = 0; i < kN; ++i) cuDevicePrimaryCtxRelease(dev);

    std::vector<std::unique_ptr<wbt::OwnedContext>> created;
    created.push_back(std::make_unique<wbt::OwnedContext>(dev));
    const size_t afterOne = wbt::freeMemory();
    for (int i = 1; i < kN; ++i) created.push_back(std::make_unique<wbt::OwnedContext>(dev));
    const size_t afterN = wbt::freeMemory();
    while (!created.empty()) created.pop_back();  // newest first, each popping itself

    const auto taken = [start](size_t now) { return static_cast<long long>(start) - static_cast<long long>(now); };
    const long long oneContext = taken(afterOne);
    CHECK(oneContext > 0);
    CHECK(taken(afterRetains) < oneContext);
    CHECK(taken(afterN) > (kN - 1) * oneContext);
  }
}

// Last in the file, so it runs after every other suite when the whole binary runs.
TEST_SUITE("cleanup") {
  TEST_CASE("the suite leaves the primary context as it found it: inactive, default flags") {
    wbt::initDriver();
    const State s = state(wbt::device(0));
    CHECK(s.active == 0);
    CHECK(s.flags == 0);
  }
}
