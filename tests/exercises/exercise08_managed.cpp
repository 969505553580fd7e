// The checks of lesson 08's exercises (lessons/08-managed/exercises.cpp). Every check uses every
// device's primary context plus contexts created on device 0, so one GPU already has several
// contexts and two GPUs add a second device. The one kernel that waits for another is held by a
// gate (lesson 09's), which a watcher opens when the code under check first waits for the GPU:
// nothing sleeps, and the gate gives up at its deadline. Each case's name begins with the
// requirements it verifies.
#include "check.hpp"
#include "gate.hpp"
#include "08-managed/exercises.hpp"

#include <atomic>
#include <memory>
#include <numeric>
#include <thread>
#include <vector>

// The checks make the learner's cuLibraryGetGlobal fail on demand (ledger.cpp does not stand before it).
WBX_INTERPOSE(cuLibraryGetGlobal, (CUdeviceptr * dptr, size_t* bytes, CUlibrary library, const char* name),
              (dptr, bytes, library, name))

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
  CUdeviceptr deviceCounterAddress() const {
    CUdeviceptr p = 0;
    size_t bytes = 0;
    CU_CHECK(cuLibraryGetGlobal(&p, &bytes, lib, "deviceCounter"));
    return p;
  }
  unsigned long long deviceCounterHere() const {
    unsigned long long v = 0;
    CU_CHECK(cuMemcpyDtoH(&v, deviceCounterAddress(), sizeof v));
    return v;
  }
  void setDeviceCounterHere(unsigned long long v) const { CU_CHECK(cuMemcpyHtoD(deviceCounterAddress(), &v, sizeof v)); }
  // count(n) over whole blocks of 256 (at least one), waited for.
  void launchHere(unsigned n) const {
    void* args[] = {&n};
    const unsigned blocks = n == 0 ? 1 : (n + 255) / 256;
    CU_CHECK(cuLaunchKernel(reinterpret_cast<CUfunction>(count), blocks, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr));
    CU_CHECK(cuCtxSynchronize());
  }
};

// Every device's primary context, then `created` contexts made on device 0 (none left current).
class Places {
 public:
  Places(int devices, int created) {
    for (int i = 0; i < devices; ++i) {
      wbt::deviceKeepingPrimary(i);  // not built again for every case
      primaries_.push_back(std::make_unique<wbt::RetainedPrimary>(wbt::device(i)));
    }
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

// The caller's own stack for a call under check, two contexts deep: the last of the places below,
// device 0's primary context on top. A call that sets contexts current instead of pushing them ends
// with another one on top (the last it visited is never device 0's primary context, which comes first).
struct CallersStack {
  wbt::Pushed below, top;
  std::vector<CUcontext> before;
  explicit CallersStack(const Places& places)
      : below(places.contexts.back()), top(places.contexts.front()), before(wbx::contextStack()) {}
};

unsigned long long sum(const std::vector<unsigned>& v) { return std::accumulate(v.begin(), v.end(), 0ull); }

// Opens a gate at the first call the code under check makes that waits for the GPU (or asks whether
// it is done), as the ledger counts them: the held kernel runs only once the host waits for it, so
// code that reads before it waits reads a result without it, every time.
class OpenOnWait {
 public:
  explicit OpenOnWait(wb::Gate& gate) : gate_(gate), start_(waits()), thread_([this] { watch(); }) {}
  ~OpenOnWait() { stop(); }
  OpenOnWait(const OpenOnWait&) = delete;
  OpenOnWait& operator=(const OpenOnWait&) = delete;
  // Ends the watch; whether a wait had opened the gate.
  bool stop() {
    done_ = true;
    if (thread_.joinable()) thread_.join();
    return opened_;
  }

 private:
  static long waits() {
    long n = 0;
    for (const char* f : {"cuCtxSynchronize", "cuStreamSynchronize", "cuEventSynchronize", "cuStreamQuery",
                          "cuEventQuery", "cuMemcpyDtoH", "cuMemcpy", "cuMemcpyDtoD", "cuMemcpyHtoD"})
      n += wbx::calls(f);
    return n;
  }
  void watch() {
    while (!done_) {
      if (waits() != start_) {
        gate_.open();
        opened_ = true;
        return;
      }
      std::this_thread::yield();
    }
  }
  wb::Gate& gate_;
  const long start_;
  std::atomic<bool> done_{false}, opened_{false};
  std::thread thread_;  // last: it starts once the members it reads are set
};

}  // namespace

EXERCISE("count-everywhere", "A counter accumulated on every device through one managed variable",
         "cuLibraryGetManaged(&ptr, &bytes, counters, \"managedCounter\") gives one pointer for every context: set "
         "*ptr = 0, then for each context with threads > 0 push it (an RAII guard pops it also when a call throws), "
         "cuLaunchKernel count with (threads + 255) / 256 blocks of 256, cuCtxSynchronize, pop. Read *ptr at the "
         "end. deviceCounter (cuLibraryGetGlobal) is the wrong variable: each context has its own copy. Push and "
         "pop, never cuCtxSetCurrent: the caller's context must be current again.") {
  TEST_CASE("R1 R2 R3 R5: each call returns the sum of its launches in every context, every context counted its own, and the caller's stack is as it was") {
    const int devices = wbt::initDriver();
    Counters c;
    Places places(devices, 1);
    std::vector<unsigned> first, second;
    for (size_t i = 0; i < places.contexts.size(); ++i) {
      first.push_back(1000 + 357 * static_cast<unsigned>(i));              // none a multiple of 256
      second.push_back(i == 0 ? 0 : 50 + 11 * static_cast<unsigned>(i));  // device 0's primary context: none
    }
    unsigned long long total1 = 0, total2 = 0;
    std::vector<CUcontext> stack, stackAfterFirst, stackAfterSecond;
    {
      CallersStack callers(places);
      stack = callers.before;
      total1 = ex08::countEverywhere(c.lib, places.contexts, first);
      stackAfterFirst = wbx::contextStack();
      total2 = ex08::countEverywhere(c.lib, places.contexts, second);
      stackAfterSecond = wbx::contextStack();
    }
    places.synchronizeAll();  // the check reads the variables only once no kernel can change them
    CHECK_MESSAGE(stackAfterFirst == stack, "the caller's context stack changed: its context is not current again");
    CHECK(stackAfterSecond == stack);
    CHECK_MESSAGE(total1 == sum(first), "the first call did not return the sum of every context's launches");
    CHECK_MESSAGE(total2 == sum(second), "the second call did not return its own sum: was the counter set to 0 first?");
    {
      wbt::Pushed first(places.contexts.front());  // cuLibraryGetManaged wants a context current
      CHECK(*c.managed() == sum(second));
    }
    for (size_t i = 0; i < places.contexts.size(); ++i) {
      CAPTURE(i);
      wbt::Pushed current(places.contexts[i]);
      CHECK_MESSAGE(c.deviceCounterHere() == static_cast<unsigned long long>(first[i]) + second[i],
                    "context i did not run exactly its own launches");
    }
  }

  TEST_CASE("R1 R3: with device 0's primary context held by a gate until the call waits, the total still holds every launch") {
    const int devices = wbt::initDriver();
    // The host touches managed memory while the gate runs; compute-sanitizer runs no kernel beside
    // a waiting gate (lesson 09). Where either rules the gate out, the call runs without it.
    bool gated = !wb::underSanitizer();
    for (int i = 0; i < devices; ++i)
      gated = gated && wbt::attribute(wbt::device(i), CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS) == 1;
    if (!gated) MESSAGE("no gate here (compute-sanitizer, or no concurrent managed access): a read before the wait may go unseen");
    Counters c;
    Places places(devices, 1);
    CUlibrary streams = nullptr;
    CU_CHECK(cuLibraryLoadFromFile(&streams, wb::verifiedImagePath("streams.fatbin").c_str(), nullptr, nullptr, 0,
                                   nullptr, nullptr, 0));
    struct Unload {
      CUlibrary lib;
      ~Unload() { cuLibraryUnload(lib); }
    } unloadStreams{streams};
    // Everything the call may load is loaded before the gate closes (lazy loading waits for running kernels).
    for (CUcontext ctx : places.contexts) {
      wbt::Pushed current(ctx);
      c.launchHere(0);  // one block that counts nothing
      c.managed();
      c.deviceCounterHere();
    }
    wbt::Pushed primary0(places.contexts.front());
    const wb::StreamKernels k = wb::StreamKernels::load(streams);
    wbt::Stream held(CU_STREAM_DEFAULT);  // blocking: device 0's NULL stream waits for the gate in it
    std::vector<unsigned> counts;
    for (size_t i = 0; i < places.contexts.size(); ++i) counts.push_back(700 + 123 * static_cast<unsigned>(i));
    unsigned long long total = 0;
    bool openedByWait = false;
    if (gated) {
      wb::Gate gate(k.gate, held.get(), 5.0);
      {
        wbt::Pushed callers(places.contexts.back());
        OpenOnWait watcher(gate);
        total = ex08::countEverywhere(c.lib, places.contexts, counts);
        openedByWait = watcher.stop();
      }
      gate.open();
    } else {
      wbt::Pushed callers(places.contexts.back());
      total = ex08::countEverywhere(c.lib, places.contexts, counts);
      openedByWait = true;
    }
    places.synchronizeAll();
    CAPTURE(openedByWait);
    const char* const why = openedByWait ? "the total misses launches, though the call waited"
                                         : "the call read the total without waiting: the launch held by the gate "
                                           "had not run yet";
    CHECK_MESSAGE(total == sum(counts), why);
  }

  TEST_CASE("R5 R6: when the second launch fails, or the first wait for a launch, the error is thrown and the caller's stack is as it was") {
    const int devices = wbt::initDriver();
    Counters c;
    Places places(devices, 1);
    std::vector<unsigned> counts(places.contexts.size(), 300);
    struct Failing {
      const char* call;
      CUresult error;
      unsigned nth;
    };
    // A launch refused, and a wait that reports what a kernel did (cuCtxSynchronize, where the call
    // waits with it: a fault in a kernel comes back there).
    const Failing plan[] = {{"cuLaunchKernel", CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, 2},
                            {"cuCtxSynchronize", CUDA_ERROR_LAUNCH_FAILED, 1}};
    bool anyFired = false;
    for (const Failing& f : plan) {
      bool threw = false, fired = false;
      std::vector<CUcontext> stack, stackAfter;
      {
        CallersStack callers(places);
        stack = callers.before;
        wbx::FailCall fail(f.call, f.error, f.nth);
        try {
          ex08::countEverywhere(c.lib, places.contexts, counts);
        } catch (const wb::DriverError& e) {
          threw = e.code() == f.error;
        }
        fired = fail.fired();
        stackAfter = wbx::contextStack();
      }
      places.synchronizeAll();
      const std::string call = f.call;
      CAPTURE(call);
      if (!fired) {
        MESSAGE("countEverywhere made no such call: its failure was not tried");
        continue;
      }
      anyFired = true;
      CHECK_MESSAGE(threw, "the failed call was not thrown as a wb::DriverError with its code");
      CHECK_MESSAGE(stackAfter == stack, "after the failure the caller's context stack is not as it was");
    }
    if (!anyFired) MESSAGE("countEverywhere launched fewer than twice with cuLaunchKernel and never waited with cuCtxSynchronize: no failure was tried");
  }
}

EXERCISE("reset-per-context", "A per-context counter reset in every context, not once per device",
         "For each context: push it with an RAII guard, cuLibraryGetGlobal(&ptr, &bytes, counters, \"deviceCounter\") "
         "(the address in that context), cuMemsetD8(ptr, 0, bytes), and let the guard pop it. Do not go by device: "
         "two contexts on one device have two copies, and the primary context is only one of them. Clear all the "
         "bytes the driver gives, and leave managedCounter alone.") {
  TEST_CASE("R1 R2 R3 R4: after counting in every context, deviceCounter reads 0 in each, managedCounter keeps its total, and the caller's stack is as it was") {
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
      // Bits in both halves: a reset of one 32-bit word leaves the other.
      c.setDeviceCounterHere(0xA5A5A5A500000000ull + 100 * (i + 1));
    }
    const unsigned long long totalBefore = *managed;
    std::vector<CUcontext> stack, stackAfter;
    {
      CallersStack callers(places);
      stack = callers.before;
      ex08::resetPerContext(c.lib, places.contexts);
      stackAfter = wbx::contextStack();
    }
    places.synchronizeAll();
    CHECK_MESSAGE(stackAfter == stack, "the caller's context stack changed: its context is not current again");
    for (size_t i = 0; i < places.contexts.size(); ++i) {
      CAPTURE(i);
      wbt::Pushed current(places.contexts[i]);
      const unsigned long long left = c.deviceCounterHere();
      CAPTURE(left);
      CHECK_MESSAGE(left == 0, "context i's own copy was not cleared, or not all of its 8 bytes");
    }
    CHECK_MESSAGE(*managed == totalBefore, "managedCounter changed: it is the process-wide total, and must keep it");
  }

  TEST_CASE("R4 R5: when the second cuLibraryGetGlobal fails, or the first write, the error is thrown and the caller's stack is as it was") {
    const int devices = wbt::initDriver();
    Counters c;
    Places places(devices, 1);
    struct Failing {
      const char* call;
      CUresult error;
      unsigned nth;
      bool required;  // the task names the call: the check insists that it was made
    };
    // The lookup the task names, then whichever write clears the variable.
    const Failing plan[] = {{"cuLibraryGetGlobal", CUDA_ERROR_NOT_FOUND, 2, true},
                            {"cuMemsetD8", CUDA_ERROR_INVALID_VALUE, 1, false},
                            {"cuMemsetD16", CUDA_ERROR_INVALID_VALUE, 1, false},
                            {"cuMemsetD32", CUDA_ERROR_INVALID_VALUE, 1, false},
                            {"cuMemcpyHtoD", CUDA_ERROR_INVALID_VALUE, 1, false}};
    bool anyWrite = false;
    for (const Failing& f : plan) {
      bool threw = false, fired = false;
      std::vector<CUcontext> stack, stackAfter;
      {
        CallersStack callers(places);
        stack = callers.before;
        wbx::FailCall fail(f.call, f.error, f.nth);
        try {
          ex08::resetPerContext(c.lib, places.contexts);
        } catch (const wb::DriverError& e) {
          threw = e.code() == f.error;
        }
        fired = fail.fired();
        stackAfter = wbx::contextStack();
      }
      const std::string call = f.call;
      CAPTURE(call);
      if (f.required) REQUIRE_MESSAGE(fired, "resetPerContext did not call cuLibraryGetGlobal once per context");
      if (!fired) continue;
      anyWrite = anyWrite || !f.required;
      CHECK_MESSAGE(threw, "the failed call was not thrown as a wb::DriverError with its code");
      CHECK_MESSAGE(stackAfter == stack, "after the failure the caller's context stack is not as it was");
    }
    if (!anyWrite) MESSAGE("resetPerContext wrote with none of cuMemsetD8, D16, D32 and cuMemcpyHtoD: a failed write was not tried");
  }
}
