// The checks of lesson 09's exercises (lessons/09-streams-events/exercises.cpp). Pending work comes
// from the lesson's gate kernel (common/gate.hpp): nothing sleeps, and every gate gives up at its
// deadline, so a learner's function that waits for the GPU costs seconds, never a hang. Order is
// proven by what arrived and by what the gate saw, never by timing; the one timed check compares
// the pipeline with references measured in the same run.
#include "check.hpp"
#include "gate.hpp"
#include "09-streams-events/exercises.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

// The primary context of device 0, current, and the gate, stamp and burn kernels loaded into it.
struct Lab {
  wbt::RetainedPrimary primary{(wbt::initDriver(), wbt::device(0))};
  wbt::Pushed current{primary.get()};
  CUlibrary library = nullptr;
  wb::StreamKernels k;
  Lab() {
    CU_CHECK(cuLibraryLoadFromFile(&library, wb::verifiedImagePath("streams.fatbin").c_str(), nullptr, nullptr, 0,
                                   nullptr, nullptr, 0));
    k = wb::StreamKernels::load(library);  // every kernel loaded before any gate closes
  }
  ~Lab() { cuLibraryUnload(library); }
};

using wbt::Stream;

class Event {
 public:
  Event() { CU_CHECK(cuEventCreate(&e_, CU_EVENT_DEFAULT)); }
  ~Event() { cuEventDestroy(e_); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  CUevent get() const { return e_; }

 private:
  CUevent e_ = nullptr;
};

// n floats of pinned host memory, freed at scope exit.
class PinnedFloats {
 public:
  explicit PinnedFloats(size_t n) { CU_CHECK(cuMemAllocHost(reinterpret_cast<void**>(&p_), n * sizeof(float))); }
  ~PinnedFloats() { cuMemFreeHost(p_); }
  PinnedFloats(const PinnedFloats&) = delete;
  PinnedFloats& operator=(const PinnedFloats&) = delete;
  float* get() const { return p_; }

 private:
  float* p_ = nullptr;
};

void launchBurn(CUfunction burn, CUdeviceptr data, unsigned n, unsigned rounds, CUstream s) {
  void* args[] = {&data, &n, &rounds};
  CU_CHECK(cuLaunchKernel(burn, ex09::kBurnBlocks, 1, 1, ex09::kBurnThreads, 1, 1, 0, s, args, nullptr));
}

template <typename T>
std::vector<T> readBack(CUdeviceptr p, size_t n) {
  std::vector<T> v(n);
  CU_CHECK(cuMemcpyDtoH(v.data(), p, n * sizeof(T)));
  return v;
}

// What the pipeline must produce: the host data copied plainly and burned in one launch. burn works
// on each element alone, so how the launches split the data does not change a bit of the result.
std::vector<float> burnedReference(const Lab& lab, const float* host, unsigned n, unsigned rounds) {
  wbt::DeviceBuffer data(size_t(n) * sizeof(float));
  CU_CHECK(cuMemcpyHtoD(data.get(), host, size_t(n) * sizeof(float)));
  launchBurn(lab.k.burn, data.get(), n, rounds, nullptr);
  CU_CHECK(cuCtxSynchronize());
  return readBack<float>(data.get(), n);
}

float elapsedMs(const Event& a, const Event& b) {
  float ms = 0;
  CU_CHECK(cuEventElapsedTime(&ms, a.get(), b.get()));
  return ms;
}

// A library loaded for one test, unloaded at scope exit.
class Library {
 public:
  explicit Library(const char* file) {
    CU_CHECK(cuLibraryLoadFromFile(&lib_, wb::verifiedImagePath(file).c_str(), nullptr, nullptr, 0, nullptr, nullptr,
                                   0));
  }
  ~Library() { cuLibraryUnload(lib_); }
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;
  CUlibrary get() const { return lib_; }
  CUfunction kernel(const char* name) const {
    CUkernel k = nullptr;
    CU_CHECK(cuLibraryGetKernel(&k, lib_, name));
    return reinterpret_cast<CUfunction>(k);
  }

 private:
  CUlibrary lib_ = nullptr;
};

}  // namespace

EXERCISE("pipeline", "A chunked copy/compute pipeline in two streams",
         "For each part: cuMemcpyHtoDAsync in copies, cuEventRecord an event in copies, cuStreamWaitEvent(compute, "
         "event, 0), then cuLaunchKernel burn in compute. One event may be recorded again for every part (a wait "
         "takes the record current at its call) and destroyed at the end. Launching burn in copies gives the right "
         "values but no overlap; launching it in compute without the wait burns data that has not arrived.") {
  TEST_CASE("pipeline returns before anything has run, and every part is burned after it has arrived") {
    Lab lab;
    const unsigned n = 1u << 20, chunks = 8, rounds = 16;
    PinnedFloats host(n);
    for (unsigned i = 0; i < n; ++i) host.get()[i] = static_cast<float>(i % 1000) / 1000.0f;
    wbt::DeviceBuffer device(size_t(n) * sizeof(float));
    CU_CHECK(cuMemsetD32(device.get(), 0xBF800000u, n));  // -1.0f: what a burn that ran before its copy would burn
    Stream copies, compute;
    wb::Gate::Outcome seen = wb::Gate::TimedOut;
    {
      wb::Gate gate(lab.k.gate, copies.get(), 2.0);  // a pipeline that waits for its work waits 2 s at most
      ex09::pipeline(lab.k.burn, host.get(), device.get(), n, chunks, rounds, copies.get(), compute.get());
      seen = gate.outcome();
      gate.open();
      copies.sync();
      compute.sync();
    }
    CHECK_MESSAGE(seen == wb::Gate::Waiting, "pipeline waited for the streams: it must only enqueue");
    const std::vector<float> want = burnedReference(lab, host.get(), n, rounds);
    const std::vector<float> got = readBack<float>(device.get(), n);
    size_t wrong = 0, first = n;
    for (size_t i = 0; i < n; ++i)
      if (got[i] != want[i] && wrong++ == 0) first = i;
    CAPTURE(wrong);
    CAPTURE(first);
    CHECK_MESSAGE(wrong == 0,
                  "elements that are not the burned copy: a part burned before it arrived, twice, or not at all");
  }

  TEST_CASE("the pipeline saves at least 0.8 of what a perfect overlap would, against copying and burning alone in this run") {
    Lab lab;
    const unsigned n = 1u << 25, chunks = 8, part = n / chunks;  // 128 MiB in parts of 16 MiB
    const size_t partBytes = size_t(part) * sizeof(float);
    PinnedFloats host(n);
    std::memset(host.get(), 0, size_t(n) * sizeof(float));
    wbt::DeviceBuffer device(size_t(n) * sizeof(float));
    Stream copies, compute;
    // The learner's code first: it also warms up what the timed runs use.
    ex09::pipeline(lab.k.burn, host.get(), device.get(), n, chunks, 1, copies.get(), compute.get());
    copies.sync();
    compute.sync();
    if (wb::underSanitizer())
      throw wbx::Skipped("compute-sanitizer serialises the GPU's work: there is no overlap to time");

    // From an event in copies to the end of the work of both streams, the better of two runs.
    Event start, joined, end;
    const auto timed = [&](auto&& enqueue) {
      float best = 0;
      for (int run = 0; run < 2; ++run) {
        CU_CHECK(cuEventRecord(start.get(), copies.get()));
        CU_CHECK(cuStreamWaitEvent(compute.get(), start.get(), 0));
        enqueue();
        CU_CHECK(cuEventRecord(joined.get(), copies.get()));
        CU_CHECK(cuStreamWaitEvent(compute.get(), joined.get(), 0));
        CU_CHECK(cuEventRecord(end.get(), compute.get()));
        CU_CHECK(cuEventSynchronize(end.get()));
        const float ms = elapsedMs(start, end);
        best = run == 0 ? ms : std::min(best, ms);
      }
      return best;
    };
    unsigned rounds = 64;
    const auto copyAll = [&] {
      for (unsigned c = 0; c < chunks; ++c)
        CU_CHECK(cuMemcpyHtoDAsync(device.get() + c * partBytes, host.get() + size_t(c) * part, partBytes,
                                   copies.get()));
    };
    const auto burnAll = [&] {
      for (unsigned c = 0; c < chunks; ++c)
        launchBurn(lab.k.burn, device.get() + c * partBytes, part, rounds, compute.get());
    };
    const float copyMs = timed(copyAll);
    float burnMs = timed(burnAll);
    for (int trial = 0; trial < 4 && std::fabs(burnMs - copyMs) > 0.05f * copyMs; ++trial) {
      rounds = std::max(1u, static_cast<unsigned>(rounds * copyMs / std::max(burnMs, 0.001f)));
      burnMs = timed(burnAll);
    }
    const float pipelineMs = timed(
        [&] { ex09::pipeline(lab.k.burn, host.get(), device.get(), n, chunks, rounds, copies.get(), compute.get()); });
    const float sum = copyMs + burnMs, ideal = std::max(copyMs, burnMs) + std::min(copyMs, burnMs) / chunks;
    const float limit = sum - 0.8f * (sum - ideal);
    MESSAGE("copying alone " << copyMs << " ms, burning alone " << burnMs << " ms (" << rounds << " rounds): "
            << "in sequence " << sum << " ms, perfectly pipelined " << ideal << " ms; the pipeline " << pipelineMs
            << " ms, at most " << limit << " ms allowed");
    CHECK_MESSAGE(pipelineMs <= limit, "the parts did not overlap: are the copies and the kernels in two streams?");
  }
}

EXERCISE("preload-kernels", "Every kernel of a library loaded before a gate closes",
         "cuLibraryGetKernelCount and cuLibraryEnumerateKernels list the CUkernels (CUDA 12.4); for each, "
         "cuKernelGetFunction gives its CUfunction in the current context, and cuFuncLoad finishes loading it. A "
         "CUkernel from cuLibraryGetKernel is a process-wide handle: having one loads nothing into any context.") {
  TEST_CASE("after preloadKernels a stamp launched beside a waiting gate runs at once, and every function of the library is loaded in the context") {
    wbt::RetainedPrimary primary((wbt::initDriver(), wbt::device(0)));
    wbt::Pushed current(primary.get());
    Library lib("streams.fatbin");  // loaded afresh: none of its kernels is loaded in any context yet
    ex09::preloadKernels(lib.get());
    CUmoduleLoadingMode mode = CU_MODULE_LAZY_LOADING;
    CU_CHECK(cuModuleGetLoadingMode(&mode));
    if (mode == CU_MODULE_EAGER_LOADING)
      throw wbx::Skipped(
          "under CUDA_MODULE_LOADING=EAGER a library is loaded whole at once: nothing is left to preload");

    // First what lazy loading does to an unloaded kernel: the stamp's launch would wait for the gate.
    if (wb::underSanitizer()) {
      MESSAGE("the stamp beside the gate is left out under compute-sanitizer, which runs one kernel at a time");
    } else {
      const CUfunction gateKernel = lib.kernel("gate"), stampKernel = lib.kernel("stamp");
      wb::PinnedWords words(2);  // [0] the stamp counter, [1] the stamp
      CUdeviceptr counter = words.device(0), slot = words.device(1);
      void* args[] = {&counter, &slot};
      Stream waiting, other;
      wb::Gate::Outcome whenStamped = wb::Gate::TimedOut;
      {
        wb::Gate gate(gateKernel, waiting.get(), 2.0);  // nothing but the stamp's launch between the gate and the wait
        CU_CHECK(cuLaunchKernel(stampKernel, 1, 1, 1, 1, 1, 1, 0, other.get(), args, nullptr));
        other.sync();
        whenStamped = gate.outcome();
      }
      CHECK(words.read(1) == 1);
      CHECK_MESSAGE(whenStamped == wb::Gate::Waiting,
                    "the stamp ran only once the gate had given up: its launch had to load it, and loading waited for "
                    "the running gate");
    }

    // Then what the driver says about every function of the library in this context.
    CUmodule module = nullptr;
    const CUresult found = cuLibraryGetModule(&module, lib.get());
    const std::string foundName = wb::errorName(found);
    CAPTURE(foundName);
    REQUIRE_MESSAGE(found == CUDA_SUCCESS, "the library has no module in this context");
#if CUDA_VERSION >= 12040
    unsigned count = 0;
    CU_CHECK(cuModuleGetFunctionCount(&count, module));
    std::vector<CUfunction> functions(count);
    CU_CHECK(cuModuleEnumerateFunctions(functions.data(), count, module));
    unsigned notLoaded = 0;
    for (CUfunction f : functions) {
      CUfunctionLoadingState state = CU_FUNCTION_LOADING_STATE_UNLOADED;
      CU_CHECK(cuFuncIsLoaded(&state, f));
      notLoaded += state != CU_FUNCTION_LOADING_STATE_LOADED;
    }
    CAPTURE(count);
    CHECK(count >= 3);  // gate, stamp and burn
    CHECK_MESSAGE(notLoaded == 0, "functions of the library are not loaded in the context (cuFuncIsLoaded)");
#endif
  }
}

EXERCISE("staging-ring", "A staging buffer reused only after the copy that reads it has run",
         "In tryUpload, if the slot at next_ has been used, cuEventQuery(slot.copied): CUDA_ERROR_NOT_READY means its "
         "copy has not run, so return false (it is an answer, not an error). Otherwise memcpy src into slot.host, "
         "cuMemcpyHtoDAsync from slot.host, cuEventRecord(slot.copied, stream), and advance next_. Pinned buffers "
         "from cuMemAllocHost; in the destructor cuEventSynchronize each used event before cuMemFreeHost.") {
  TEST_CASE("two buffers: two uploads accepted and a third refused while the stream is held; what arrives is what was passed, and the refused upload is accepted once the stream has run") {
    Lab lab;
    const size_t words = 16384, bytes = words * sizeof(unsigned);  // 64 KiB frames
    std::vector<unsigned> frames[3];
    for (unsigned f = 0; f < 3; ++f)
      for (size_t i = 0; i < words; ++i) frames[f].push_back(static_cast<unsigned>((f + 1) * 1000003u + i));
    wbt::DeviceBuffer dst(3 * bytes);
    CU_CHECK(cuMemsetD8(dst.get(), 0, 3 * bytes));
    Stream s;
    ex09::StagingRing ring(2, bytes);
    bool accepted[3] = {false, false, false};
    wb::Gate::Outcome seen = wb::Gate::TimedOut;
    {
      wb::Gate gate(lab.k.gate, s.get(), 2.0);  // a ring that waits for a buffer waits 2 s at most
      std::vector<unsigned> src;
      for (unsigned f = 0; f < 3; ++f) {
        src = frames[f];
        accepted[f] = ring.tryUpload(src.data(), bytes, dst.get() + f * bytes, s.get());
        std::fill(src.begin(), src.end(), 0xDEADBEEFu);  // the producer reuses its memory at once
      }
      seen = gate.outcome();
      gate.open();
      s.sync();
    }
    const std::vector<unsigned> afterRefusal = readBack<unsigned>(dst.get() + 2 * bytes, words);
    std::vector<unsigned> again = frames[2];
    const bool acceptedLater = ring.tryUpload(again.data(), bytes, dst.get() + 2 * bytes, s.get());
    s.sync();

    CHECK_MESSAGE(seen == wb::Gate::Waiting, "tryUpload waited for the stream: it must return at once");
    CHECK(accepted[0]);
    CHECK(accepted[1]);
    CHECK_MESSAGE(!accepted[2], "the third upload was taken while both buffers' copies were still pending");
    CHECK_MESSAGE(readBack<unsigned>(dst.get(), words) == frames[0],
                  "the first frame arrived changed: its staging buffer was reused before its copy ran");
    CHECK(readBack<unsigned>(dst.get() + bytes, words) == frames[1]);
    CHECK_MESSAGE(std::all_of(afterRefusal.begin(), afterRefusal.end(), [](unsigned v) { return v == 0; }),
                  "the refused upload wrote to its destination");
    CHECK_MESSAGE(acceptedLater, "the upload was refused although the stream had run");
    CHECK(readBack<unsigned>(dst.get() + 2 * bytes, words) == frames[2]);
  }
}
