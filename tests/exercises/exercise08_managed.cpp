// The checks of lesson 08's exercises (lessons/08-managed/exercises.cpp). Every check uses every
// device's primary context plus contexts created on device 0, so one GPU already has several
// contexts and two GPUs add a second device; no kernel here waits for another.
#include "check.hpp"
#include "08-managed/exercises.hpp"

#include <memory>
#include <numeric>
#include <vector>

namespace {

// counters.fatbin, loaded for the test: its kernel and its two variables, as seen from the current context.
struct Counters {
  CUlibrary lib = nullptr;
  CUkernel count = nullptr;
  Counters() {
    CU_CHECK(cuLibraryLoadFromFile(&lib, wb::verifiedImagePath("counters.fatbin").c_str(), nullptr, nullptr, 0, nullptr,
                                   nullptr, 0));
    CU_CHECK(cuLibraryGetKernel(&count, lib, "count"));
  }
  ~Counters() { cuLibraryUnload(lib); }
  Counters(const Counters&) = delete;
  Counters& operator=(const Counters&) = delete;

  unsigned long long* managed() const {
    CUdeviceptr p = 0;
    size_t bytes = 0;
    CU_CHECK(cuLibraryGetManaged(&p, &bytes, lib, "managedCounter"));
    return reinterpret_cast<unsigned long long*>(p);
  }
  unsigned long long deviceCounterHere() const {
    CUdeviceptr p = 0;
    size_t bytes = 0;
    CU_CHECK(cuLibraryGetGlobal(&p, &bytes, lib, "deviceCounter"));
    unsigned long long v = 0;
    CU_CHECK(cuMemcpyDtoH(&v, p, sizeof v));
    return v;
  }
  void launchHere(unsigned n) const {
    void* args[] = {&n};
    CU_CHECK(cuLaunchKernel(reinterpret_cast<CUfunction>(count), (n + 255) / 256, 1, 1, 256, 1, 1, 0, nullptr, args,
                            nullptr));
    CU_CHECK(cuCtxSynchronize());
  }
};

// Every device's primary context, then `created` contexts made on device 0 (none left current).
class Places {
 public:
  Places(int devices, int created) {
    for (int i = 0; i < devices; ++i) primaries_.push_back(std::make_unique<wbt::RetainedPrimary>(wbt::device(i)));
    for (int i = 0; i < created; ++i) {
      created_.push_back(std::make_unique<wbt::OwnedContext>(wbt::device(0)));
      CUcontext popped = nullptr;
      CU_CHECK(cuCtxPopCurrent(&popped));
    }
    for (const auto& p : primaries_) contexts.push_back(p->get());
    for (const auto& c : created_) contexts.push_back(c->get());
  }
  // Waits for every context's work, so the host may read what the kernels wrote.
  void synchronizeAll() const {
    for (CUcontext ctx : contexts) {
      wbt::Pushed current(ctx);
      CU_CHECK(cuCtxSynchronize());
    }
  }
  std::vector<CUcontext> contexts;

 private:
  std::vector<std::unique_ptr<wbt::RetainedPrimary>> primaries_;
  std::vector<std::unique_ptr<wbt::OwnedContext>> created_;
};

unsigned long long sum(const std::vector<unsigned>& v) { return std::accumulate(v.begin(), v.end(), 0ull); }

}  // namespace

EXERCISE("count-everywhere", "A counter accumulated on every device through one managed variable",
         "cuLibraryGetManaged(&ptr, &bytes, counters, \"managedCounter\") gives one pointer for every context: set "
         "*ptr = 0, then for each context push it, cuLibraryGetKernel \"count\" and cuLaunchKernel it with "
         "(threads + 255) / 256 blocks of 256, cuCtxSynchronize, pop. Read *ptr at the end. deviceCounter "
         "(cuLibraryGetGlobal) is the wrong variable: each context has its own copy.") {
  TEST_CASE("each call returns the sum of its launches in every context, every context counted its own, and the caller's context is current again") {
    const int devices = wbt::initDriver();
    Counters c;
    Places places(devices, 1);  // the created context is the last one, and the caller's own
    wbt::Pushed callers(places.contexts.back());
    std::vector<unsigned> first, second;
    for (size_t i = 0; i < places.contexts.size(); ++i) {
      first.push_back(1000 + 357 * static_cast<unsigned>(i));
      second.push_back(50 + 11 * static_cast<unsigned>(i));
    }
    const unsigned long long total1 = ex08::countEverywhere(c.lib, places.contexts, first);
    const CUcontext afterFirst = wbt::current();
    const unsigned long long total2 = ex08::countEverywhere(c.lib, places.contexts, second);
    const CUcontext afterSecond = wbt::current();
    places.synchronizeAll();  // the check reads the variables only once no kernel can change them
    CHECK_MESSAGE(afterFirst == places.contexts.back(), "the caller's context was not current after the call");
    CHECK(afterSecond == places.contexts.back());
    CHECK_MESSAGE(total1 == sum(first), "the first call did not return the sum of every context's launches");
    CHECK_MESSAGE(total2 == sum(second), "the second call did not return its own sum: was the counter set to 0 first?");
    CHECK(*c.managed() == sum(second));
    for (size_t i = 0; i < places.contexts.size(); ++i) {
      CAPTURE(i);
      wbt::Pushed current(places.contexts[i]);
      CHECK_MESSAGE(c.deviceCounterHere() == static_cast<unsigned long long>(first[i]) + second[i],
                    "context i did not run exactly its own launches");
    }
  }
}

EXERCISE("reset-per-context", "A per-context counter reset in every context, not once per device",
         "For each context: cuCtxPushCurrent it, cuLibraryGetGlobal(&ptr, &bytes, counters, \"deviceCounter\") (the "
         "address in that context), cuMemsetD8(ptr, 0, bytes), cuCtxPopCurrent. Do not go by device: two contexts "
         "on one device have two copies, and the primary context is only one of them.") {
  TEST_CASE("after counting in every context, deviceCounter reads 0 in each, managedCounter keeps its total, and the caller's context is current again") {
    const int devices = wbt::initDriver();
    Counters c;
    Places places(devices, 2);  // device 0 has three contexts: its primary and two created ones
    unsigned long long* managed = nullptr;
    {
      wbt::Pushed first(places.contexts.front());
      managed = c.managed();
    }
    *managed = 0;  // no kernel is running
    for (size_t i = 0; i < places.contexts.size(); ++i) {
      wbt::Pushed current(places.contexts[i]);
      c.launchHere(100 * static_cast<unsigned>(i + 1));
    }
    const unsigned long long totalBefore = *managed;
    wbt::Pushed callers(places.contexts.back());
    ex08::resetPerContext(c.lib, places.contexts);
    const CUcontext after = wbt::current();
    places.synchronizeAll();
    CHECK_MESSAGE(after == places.contexts.back(), "the caller's context was not current after the call");
    for (size_t i = 0; i < places.contexts.size(); ++i) {
      CAPTURE(i);
      wbt::Pushed current(places.contexts[i]);
      CHECK_MESSAGE(c.deviceCounterHere() == 0, "context i still has its count: its own copy was not reset");
    }
    CHECK_MESSAGE(*managed == totalBefore, "managedCounter changed: it is the process-wide total, and must keep it");
  }
}
