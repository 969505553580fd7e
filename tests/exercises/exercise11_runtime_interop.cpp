// The checks of lesson 11's exercises (lessons/11-runtime-interop/exercises.cpp). The framework is
// played by the CUDA runtime (cudaSetDevice, cudaMalloc, cudaStreamCreateWithFlags, cudaMemsetAsync
// and the lesson's kernel add_one), the library by the driver. Pending work comes from the gate
// kernel (common/gate.hpp): "only enqueues" is proven by what the gate saw, never by timing.
// Nothing here resets the device or faults, so every check runs in this process. The ledger
// (ledger.hpp) counts what the library holds, and fails one cuLaunchKernel on demand. Each case's
// name begins with the requirements it verifies.
#include "check.hpp"
#include "gate.hpp"
#include "runtime_kernel.hpp"
#include "11-runtime-interop/exercises.hpp"

#include <cuda_runtime.h>

#include <exception>
#include <string>
#include <thread>
#include <vector>

namespace {

void rt(cudaError_t rc) { REQUIRE_MESSAGE(rc == cudaSuccess, cudaGetErrorName(rc)); }

// A library of the kernel folder, loaded for one check and unloaded at scope exit.
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
  CUkernel kernel(const char* name) const {
    CUkernel k = nullptr;
    CU_CHECK(cuLibraryGetKernel(&k, lib_, name));
    return k;
  }

 private:
  CUlibrary lib_ = nullptr;
};

// The framework's start: the runtime initialised on device 0, which makes its primary context
// current in this thread (lesson 11, step 1).
struct RuntimeOnDevice0 {
  CUcontext primary = nullptr;
  RuntimeOnDevice0() {
    wbt::initDriver();
    rt(cudaSetDevice(0));
    rt(cudaFree(nullptr));
    primary = wbt::current();
    REQUIRE(primary != nullptr);
  }
};

// The framework's state and the library's kernels: scale (vector_ops) and the gate (streams). Every
// kernel a check launches while a gate waits is loaded into the primary context first: under lazy
// loading, loading a kernel may wait for the kernels running in the context (lesson 09).
struct Lab {
  RuntimeOnDevice0 runtime;
  Library streams{"streams.fatbin"}, vectorOps{"vector_ops.fatbin"};
  wb::StreamKernels k = wb::StreamKernels::load(streams.get());
  CUkernel scale = vectorOps.kernel("scale");
  Lab() {
    CUdeviceptr none = 0;
    float one = 1.0f, zero = 0.0f;
    unsigned count = 0;
    void* args[] = {&none, &one, &zero, &count};  // scale over no element: it touches nothing
    CU_CHECK(cuLaunchKernel(reinterpret_cast<CUfunction>(scale), 1, 1, 1, 32, 1, 1, 0, nullptr, args, nullptr));
    float* few = nullptr;
    rt(cudaMalloc(&few, 256 * sizeof(float)));
    rt(launchAddOne(few, 256, nullptr));  // the framework's add_one, the runtime's way
    rt(cudaDeviceSynchronize());
    rt(cudaFree(few));
  }
  CUcontext primary() const { return runtime.primary; }
};

// A stream the framework creates with the runtime, in the context current now: non-blocking, so it
// does not wait for the legacy default stream. Synchronised and destroyed in that same context.
class RuntimeStream {
 public:
  RuntimeStream() : ctx_(wbt::current()) { rt(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
  ~RuntimeStream() {
    cuCtxPushCurrent(ctx_);
    cudaStreamSynchronize(s_);
    cudaStreamDestroy(s_);
    CUcontext popped = nullptr;
    cuCtxPopCurrent(&popped);
  }
  RuntimeStream(const RuntimeStream&) = delete;
  RuntimeStream& operator=(const RuntimeStream&) = delete;
  cudaStream_t get() const { return s_; }
  void sync() const {
    wbt::Pushed in(ctx_);
    rt(cudaStreamSynchronize(s_));
  }

 private:
  CUcontext ctx_ = nullptr;
  cudaStream_t s_ = nullptr;
};

// n floats the framework allocates with cudaMalloc in the context current now, each set to value;
// read and freed in that context.
class RuntimeFloats {
 public:
  RuntimeFloats(unsigned n, float value) : ctx_(wbt::current()), n_(n) {
    rt(cudaMalloc(&p_, n * sizeof(float)));
    const std::vector<float> values(n, value);
    rt(cudaMemcpy(p_, values.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    rt(cudaDeviceSynchronize());  // from pageable memory the copy may still be on its way when cudaMemcpy returns
  }
  ~RuntimeFloats() {
    cuCtxPushCurrent(ctx_);
    cudaFree(p_);
    CUcontext popped = nullptr;
    cuCtxPopCurrent(&popped);
  }
  RuntimeFloats(const RuntimeFloats&) = delete;
  RuntimeFloats& operator=(const RuntimeFloats&) = delete;
  float* get() const { return p_; }
  // What the memory holds: call it once the stream that wrote it has been synchronised.
  std::vector<float> read() const {
    wbt::Pushed in(ctx_);
    std::vector<float> values(n_);
    rt(cudaMemcpy(values.data(), p_, n_ * sizeof(float), cudaMemcpyDeviceToHost));
    return values;
  }

 private:
  CUcontext ctx_ = nullptr;
  unsigned n_ = 0;
  float* p_ = nullptr;
};

// Runs work in a new thread, and rethrows here what it threw there (wb::NotDone included).
template <typename Work>
void inNewThread(Work&& work) {
  std::exception_ptr thrown;
  std::thread([&] {
    try {
      work();
    } catch (...) {
      thrown = std::current_exception();
    }
  }).join();
  if (thrown) std::rethrow_exception(thrown);
}

constexpr unsigned kElements = 100000;  // not a multiple of 256
constexpr unsigned kSmall = 100;        // fewer than one block of 256 threads
constexpr unsigned kGuard = 256;        // floats after the n a call is given, which it must leave alone

// How many of values are wrong: the first n must be want, the guard after them still guard.
unsigned wrongElements(const std::vector<float>& values, unsigned n, float want, float guard) {
  unsigned wrong = 0;
  for (unsigned i = 0; i < values.size(); ++i) wrong += values[i] != (i < n ? want : guard);
  return wrong;
}

// A kernel put in the NULL stream (the legacy stream of the current context) instead of the
// stream it was given does not wait for a gate in that non-blocking stream: after this it has run,
// before the gate opens. Left out under compute-sanitizer, which runs no kernel beside a waiting
// gate (lesson 09); only the solutions run there.
void finishLegacyStream() {
  if (!wb::underSanitizer()) CU_CHECK(cuStreamSynchronize(CU_STREAM_LEGACY));
}

// Empties the calling thread's context stack and pushes stack back (top first, as
// wbx::contextStack() gives it): a check that found the stack changed leaves it as it was.
void restoreStack(const std::vector<CUcontext>& stack) {
  for (CUcontext top = wbt::current(); top; top = wbt::current()) {
    CUcontext popped = nullptr;
    CU_CHECK(cuCtxPopCurrent(&popped));
  }
  for (auto it = stack.rbegin(); it != stack.rend(); ++it) CU_CHECK(cuCtxPushCurrent(*it));
}

// What a call threw as wb::DriverError, with the nth-from-now cuLaunchKernel failing with injected.
struct Failed {
  bool threw = false, fired = false;
  CUresult code = CUDA_SUCCESS;
};

template <typename Call>
Failed withFailedLaunch(CUresult injected, Call&& call) {
  Failed f;
  wbx::FailCall fail("cuLaunchKernel", injected);
  try {
    call();
  } catch (const wb::DriverError& e) {
    f.threw = true;
    f.code = e.code();
  }
  f.fired = fail.fired();
  return f;
}

}  // namespace

EXERCISE("framework-stream", "Driver work in a runtime framework's stream, from any thread",
         "A cudaStream_t is a CUstream, and a CUkernel cast to CUfunction and launched into a stream runs in that "
         "stream's context, whatever the thread has current: the library needs no context at all. So retain, push "
         "or set nothing, and never synchronise: return right after cuLaunchKernel(..., stream, args, nullptr) "
         "with void* args[] = {&data, &factor, &offset, &n} in (n + 255) / 256 blocks of 256 threads, and no "
         "launch when n is 0 (a grid of no blocks is refused). CU_CHECK throws wb::DriverError.") {
  TEST_CASE("R1 R3 R5: in the framework's thread: scaleInStream only enqueues, in the stream's order between the framework's own launches, over n elements and no more, and the primary context stays current") {
    Lab lab;
    RuntimeStream stream;
    RuntimeFloats data(kElements + kGuard, 1.0f);
    // The learner's code first, times one plus nothing: it also loads whatever it uses before the gate closes.
    ex11::scaleInStream(lab.scale, data.get(), kElements, 1.0f, 0.0f, stream.get());
    stream.sync();
    wb::Gate::Outcome seen = wb::Gate::TimedOut;
    {
      wb::Gate gate(lab.k.gate, stream.get(), 2.0);  // a call that waits for the stream waits 2 s at most
      rt(launchAddOne(data.get(), kElements, stream.get()));  // the framework's work before the call: 1 + 1
      ex11::scaleInStream(lab.scale, data.get(), kElements, 2.0f, 3.0f, stream.get());
      seen = gate.outcome();
      rt(launchAddOne(data.get(), kElements, stream.get()));  // and after it
      finishLegacyStream();
      gate.open();
      stream.sync();
    }
    const CUcontext after = wbt::current();
    const unsigned wrong = wrongElements(data.read(), kElements, 8.0f, 1.0f);
    CAPTURE(wrong);
    CHECK_MESSAGE(seen == wb::Gate::Waiting, "scaleInStream waited for the stream: a library handed a stream only "
                                             "enqueues into it");
    CHECK_MESSAGE(wrong == 0,
                  "elements that are not (1 + 1) * 2 + 3 + 1, or floats after the n that changed: scale ran outside "
                  "the stream's order, over other elements than the n (100000 is not a multiple of 256), or with "
                  "other arguments");
    CHECK_MESSAGE(after == lab.primary(), "the framework's thread no longer has the primary context current");
  }

  TEST_CASE("R4 R5 R6: from a new thread, where no context is current: the work is done, the thread still has no context current afterwards, and the process holds what it held") {
    Lab lab;
    RuntimeStream stream;
    RuntimeFloats data(kElements, 2.0f);
    const wbx::Holdings before = wbx::holdings();
    CUcontext current = nullptr, after = nullptr;
    inNewThread([&] {
      CU_CHECK(cuCtxGetCurrent(&current));
      ex11::scaleInStream(lab.scale, data.get(), kElements, 2.0f, 3.0f, stream.get());
      CU_CHECK(cuCtxGetCurrent(&after));
    });
    const std::string held = wbx::holdings().differenceFrom(before);
    stream.sync();
    REQUIRE(current == nullptr);  // what every new thread starts with (lesson 03)
    CHECK_MESSAGE(after == nullptr, "the worker thread was left with a context current: a library never sets one "
                                    "for its caller");
    CHECK_MESSAGE(held == "", "scaleInStream kept what it took: " << held);
    CHECK_MESSAGE(wb::mismatches(data.read(), 7.0f) == 0, "elements that are not 2 * 2 + 3");
  }

  TEST_CASE("R4 R5 R6: from a thread where another library's context is current: the work is done, and that context is still current, alone on the thread's stack") {
    Lab lab;
    RuntimeStream stream;
    RuntimeFloats data(kElements, 2.0f);
    wbt::OwnedContext others(wbt::device(0));  // another library's context: created, and pushed here
    CUcontext popped = nullptr;
    CU_CHECK(cuCtxPopCurrent(&popped));  // this thread has the primary context current again
    const wbx::Holdings before = wbx::holdings();
    std::vector<CUcontext> stack;
    inNewThread([&] {
      CU_CHECK(cuCtxSetCurrent(others.get()));  // what that library left current in its thread
      ex11::scaleInStream(lab.scale, data.get(), kElements, 2.0f, 3.0f, stream.get());
      stack = wbx::contextStack();
      restoreStack({});
    });
    const std::string held = wbx::holdings().differenceFrom(before);
    stream.sync();
    CHECK_MESSAGE(stack == std::vector<CUcontext>{others.get()},
                  "the other library's context is no longer current in its thread, or not alone on its stack");
    CHECK_MESSAGE(held == "", "scaleInStream kept what it took: " << held);
    CHECK_MESSAGE(wb::mismatches(data.read(), 7.0f) == 0, "elements that are not 2 * 2 + 3");
  }

  TEST_CASE("R4 R5 R6: with a stream the framework made while a context of its own was current, called where the primary context is current: the work is done in the framework's context") {
    Lab lab;
    wbt::OwnedContext frameworks(wbt::device(0));  // created and pushed: the runtime now uses it (step 2)
    RuntimeStream stream;
    RuntimeFloats data(kElements, 2.0f);
    CUcontext popped = nullptr;
    CU_CHECK(cuCtxPopCurrent(&popped));  // the calling thread has the primary context current
    const std::vector<CUcontext> stackBefore = wbx::contextStack();
    const wbx::Holdings before = wbx::holdings();
    ex11::scaleInStream(lab.scale, data.get(), kElements, 2.0f, 3.0f, stream.get());
    const std::string held = wbx::holdings().differenceFrom(before);
    const std::vector<CUcontext> stackAfter = wbx::contextStack();
    restoreStack(stackBefore);
    stream.sync();
    CHECK_MESSAGE(stackAfter == stackBefore, "the calling thread's context stack changed");
    CHECK_MESSAGE(held == "", "scaleInStream kept what it took: " << held);
    CHECK_MESSAGE(wb::mismatches(data.read(), 7.0f) == 0,
                  "elements that are not 2 * 2 + 3: was the work done in the primary context, not the stream's?");
  }

  TEST_CASE("R1 R2 R5 R6 R7: a failed launch is thrown as wb::DriverError with its code, and the calling thread's context stack is as it was; an empty tensor changes nothing, and one smaller than a block is scaled") {
    Lab lab;
    RuntimeStream stream;
    RuntimeFloats data(kElements, 2.0f);
    RuntimeFloats small(kSmall + kGuard, 2.0f);  // fewer floats than one block has threads
    const std::vector<CUcontext> stackBefore = wbx::contextStack();  // the primary context, as the runtime set it
    const wbx::Holdings before = wbx::holdings();
    const Failed failed = withFailedLaunch(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, [&] {
      ex11::scaleInStream(lab.scale, data.get(), kElements, 2.0f, 3.0f, stream.get());
    });
    const std::vector<CUcontext> stackAfter = wbx::contextStack();
    const std::string held = wbx::holdings().differenceFrom(before);
    restoreStack(stackBefore);
    bool emptyThrew = false;
    try {
      ex11::scaleInStream(lab.scale, data.get(), 0, 2.0f, 3.0f, stream.get());
    } catch (const wb::DriverError&) {
      emptyThrew = true;
    }
    stream.sync();
    const std::vector<float> afterEmpty = data.read();
    ex11::scaleInStream(lab.scale, small.get(), kSmall, 2.0f, 3.0f, stream.get());
    stream.sync();
    const unsigned wrongSmall = wrongElements(small.read(), kSmall, 7.0f, 2.0f);
    CAPTURE(wrongSmall);
    const std::string thrown = wb::errorName(failed.code);
    CAPTURE(thrown);
    REQUIRE_MESSAGE(failed.fired, "scaleInStream did not call cuLaunchKernel");
    CHECK_MESSAGE(failed.threw, "the failed launch was not thrown as wb::DriverError");
    CHECK(failed.code == CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
    CHECK_MESSAGE(stackAfter == stackBefore, "after the failed launch the thread's context stack is not as it was");
    CHECK_MESSAGE(held == "", "after the failed launch scaleInStream kept what it took: " << held);
    CHECK_MESSAGE(!emptyThrew, "an empty tensor (n = 0) is nothing to do, not an error");
    CHECK_MESSAGE(wb::mismatches(afterEmpty, 2.0f) == 0, "the failed call or the empty one changed the tensor");
    CHECK_MESSAGE(wrongSmall == 0, "a tensor of 100 floats: elements that are not 2 * 2 + 3, or floats after them that changed");
  }
}

EXERCISE("kernel-through-driver", "The framework's kernel launched with cuLaunchKernel, in any context",
         "cudaGetKernel(&kernel, addOneEntry()) gives the kernel's cudaKernel_t, a context-independent CUkernel: "
         "cast to CUfunction, cuLaunchKernel runs it in the context of the stream it is given, loading it there "
         "first if needed, whatever the thread has current. The cudaFunction_t of cudaGetFuncBySymbol, like the "
         "CUfunction of cuKernelGetFunction, belongs to one context, and a stream of another refuses it. Arguments: "
         "void* args[] = {&data, &n}, in (n + 255) / 256 blocks of 256 threads.") {
  TEST_CASE("R1 R2: add_one through cuLaunchKernel adds one to each of n elements, in the stream's order, and returns before it has run") {
    Lab lab;
    const unsigned n = 1000, few = 100;
    RuntimeStream stream;
    RuntimeFloats data(n, 0.0f);
    rt(cudaMemsetAsync(data.get(), 0, n * sizeof(float), stream.get()));  // loads what a memset needs
    ex11::addOneThroughDriver(data.get(), n, stream.get());  // the learner's code first: it loads what it launches
    stream.sync();
    const std::vector<float> warm = data.read();
    wb::Gate::Outcome seen = wb::Gate::TimedOut;
    {
      wb::Gate gate(lab.k.gate, stream.get(), 2.0);  // a call that waits for the stream waits 2 s at most
      rt(cudaMemsetAsync(data.get(), 0, n * sizeof(float), stream.get()));  // the framework's zeroing, queued first
      ex11::addOneThroughDriver(data.get(), n, stream.get());
      ex11::addOneThroughDriver(data.get(), few, stream.get());
      seen = gate.outcome();
      finishLegacyStream();
      gate.open();
      stream.sync();
    }
    const std::vector<float> back = data.read();
    unsigned wrongFirst = 0, wrongRest = 0;  // elements that are not 2 among the first 100, not 1 after them
    for (unsigned i = 0; i < few; ++i) wrongFirst += back[i] != 2.0f;
    for (unsigned i = few; i < n; ++i) wrongRest += back[i] != 1.0f;
    CAPTURE(wrongFirst);
    CAPTURE(wrongRest);
    CHECK_MESSAGE(wb::mismatches(warm, 1.0f) == 0, "the first call did not add one to every element");
    CHECK_MESSAGE(seen == wb::Gate::Waiting, "addOneThroughDriver waited for the stream: it must only enqueue");
    CHECK_MESSAGE(wrongFirst + wrongRest == 0,
                  "not 2 in the first 100 and 1 after them: a launch over other elements than n, or outside the "
                  "stream's order");
  }

  TEST_CASE("R3: add_one through cuLaunchKernel works in the primary context, then in a context the application created and made current, then in that context from a thread where the primary context is current") {
    Lab lab;
    const unsigned n = 1000;
    std::vector<float> inPrimary;
    {
      RuntimeStream stream;
      RuntimeFloats data(n, 0.0f);
      ex11::addOneThroughDriver(data.get(), n, stream.get());
      stream.sync();
      inPrimary = data.read();
    }
    wbt::OwnedContext applications(wbt::device(0));  // created and pushed: the runtime now uses it (step 2)
    RuntimeStream stream;
    RuntimeFloats data(n, 5.0f);
    ex11::addOneThroughDriver(data.get(), n, stream.get());
    stream.sync();
    const std::vector<float> inCreated = data.read();
    CUcontext popped = nullptr;
    CU_CHECK(cuCtxPopCurrent(&popped));  // the primary context is current; the stream and memory stay the created one's
    ex11::addOneThroughDriver(data.get(), n, stream.get());
    stream.sync();
    CHECK_MESSAGE(wb::mismatches(inPrimary, 1.0f) == 0, "in the primary context, elements that are not 0 + 1");
    CHECK_MESSAGE(wb::mismatches(inCreated, 6.0f) == 0, "in the created context, elements that are not 5 + 1");
    CHECK_MESSAGE(wb::mismatches(data.read(), 7.0f) == 0,
                  "in the created context's stream, called with the primary context current, elements that are not 6 + 1");
  }

  TEST_CASE("R4: a failed launch is thrown as wb::DriverError with its code") {
    Lab lab;
    RuntimeStream stream;
    RuntimeFloats data(1000, 0.0f);
    const Failed failed = withFailedLaunch(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES,
                                           [&] { ex11::addOneThroughDriver(data.get(), 1000, stream.get()); });
    stream.sync();
    const std::string thrown = wb::errorName(failed.code);
    CAPTURE(thrown);
    REQUIRE_MESSAGE(failed.fired, "addOneThroughDriver did not call cuLaunchKernel");
    CHECK_MESSAGE(failed.threw, "the failed launch was not thrown as wb::DriverError");
    CHECK(failed.code == CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
  }
}
