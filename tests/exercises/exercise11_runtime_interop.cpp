// The checks of lesson 11's exercises (lessons/11-runtime-interop/exercises.cpp). The framework is
// played by the CUDA runtime (cudaSetDevice, cudaMalloc, cudaStreamCreateWithFlags, cudaMemsetAsync
// and the lesson's kernel add_one), the library by the driver. Pending work comes from the gate
// kernel (common/gate.hpp): "only enqueues" is proven by what the gate saw, never by timing.
// Nothing here resets the device or faults, so every check runs in this process.
#include "check.hpp"
#include "gate.hpp"
#include "runtime_kernel.hpp"
#include "11-runtime-interop/exercises.hpp"

#include <cuda_runtime.h>

#include <exception>
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

constexpr unsigned kElements = 100000;

}  // namespace

EXERCISE("framework-stream", "Driver work in a runtime framework's stream, from any thread",
         "A cudaStream_t is a CUstream: cuStreamGetCtx(stream, &ctx) names the context it belongs to (the one "
         "current when the framework created it). cuCtxPushCurrent(ctx) before your driver calls and "
         "cuCtxPopCurrent after them (a small scope guard pops on an exception too) leave the thread as it was. "
         "A CUkernel cast to CUfunction and launched into a stream runs in that stream's context. Never "
         "cuCtxSetCurrent for your caller, and never synchronise: return right after cuLaunchKernel, with "
         "void* args[] = {&data, &factor, &offset, &n}.") {
  TEST_CASE("in the framework's thread: scaleInStream only enqueues, in the stream's order between the framework's own launches, and the primary context stays current") {
    Lab lab;
    RuntimeStream stream;
    RuntimeFloats data(kElements, 0.0f);
    // The learner's code first, times one plus nothing: it also loads whatever it uses before the gate closes.
    ex11::scaleInStream(lab.scale, data.get(), kElements, 1.0f, 0.0f, stream.get());
    stream.sync();
    wb::Gate::Outcome seen = wb::Gate::TimedOut;
    {
      wb::Gate gate(lab.k.gate, stream.get(), 2.0);  // a call that waits for the stream waits 2 s at most
      rt(launchAddOne(data.get(), kElements, stream.get()));  // the framework's work before the call: 0 + 1
      ex11::scaleInStream(lab.scale, data.get(), kElements, 2.0f, 3.0f, stream.get());
      seen = gate.outcome();
      rt(launchAddOne(data.get(), kElements, stream.get()));  // and after it
      gate.open();
      stream.sync();
    }
    const CUcontext after = wbt::current();
    const std::vector<float> back = data.read();
    CHECK_MESSAGE(seen == wb::Gate::Waiting, "scaleInStream waited for the stream: a library handed a stream only "
                                             "enqueues into it");
    CHECK_MESSAGE(wb::mismatches(back, 6.0f) == 0,
                  "elements that are not 6: scale ran outside the stream's order, over other elements, or with "
                  "other arguments");
    CHECK_MESSAGE(after == lab.primary(), "the framework's thread no longer has the primary context current");
  }

  TEST_CASE("from a new thread, where no context is current: the work is done, and the thread still has no context current afterwards") {
    Lab lab;
    RuntimeStream stream;
    RuntimeFloats data(kElements, 1.0f);
    CUcontext before = nullptr, after = nullptr;
    inNewThread([&] {
      CU_CHECK(cuCtxGetCurrent(&before));
      ex11::scaleInStream(lab.scale, data.get(), kElements, 2.0f, 3.0f, stream.get());
      CU_CHECK(cuCtxGetCurrent(&after));
    });
    stream.sync();
    REQUIRE(before == nullptr);  // what every new thread starts with (lesson 03)
    CHECK_MESSAGE(after == nullptr, "the worker thread was left with a context current: a library pushes the "
                                    "context it needs and pops it, and never sets one for its caller");
    CHECK_MESSAGE(wb::mismatches(data.read(), 5.0f) == 0, "elements that are not 1 * 2 + 3");
  }

  TEST_CASE("from a thread where another library's context is current: the work is done, and that context is still current afterwards") {
    Lab lab;
    RuntimeStream stream;
    RuntimeFloats data(kElements, 1.0f);
    wbt::OwnedContext others(wbt::device(0));  // another library's context: created, and pushed here
    CUcontext popped = nullptr;
    CU_CHECK(cuCtxPopCurrent(&popped));  // this thread has the primary context current again
    CUcontext after = nullptr;
    inNewThread([&] {
      CU_CHECK(cuCtxSetCurrent(others.get()));  // what that library left current in its thread
      ex11::scaleInStream(lab.scale, data.get(), kElements, 2.0f, 3.0f, stream.get());
      CU_CHECK(cuCtxGetCurrent(&after));
      CU_CHECK(cuCtxSetCurrent(nullptr));
    });
    stream.sync();
    CHECK_MESSAGE(after == others.get(), "the other library's context is no longer current in its thread");
    CHECK_MESSAGE(wb::mismatches(data.read(), 5.0f) == 0, "elements that are not 1 * 2 + 3");
  }

  TEST_CASE("with a stream the framework made while a context of its own was current, called where the primary context is current: the work is done in the framework's context") {
    Lab lab;
    wbt::OwnedContext frameworks(wbt::device(0));  // created and pushed: the runtime now uses it (step 2)
    RuntimeStream stream;
    RuntimeFloats data(kElements, 1.0f);
    CUcontext popped = nullptr;
    CU_CHECK(cuCtxPopCurrent(&popped));  // the calling thread has the primary context current
    ex11::scaleInStream(lab.scale, data.get(), kElements, 2.0f, 3.0f, stream.get());
    const CUcontext after = wbt::current();
    stream.sync();
    CHECK_MESSAGE(after == lab.primary(), "the calling thread no longer has the primary context current");
    CHECK_MESSAGE(wb::mismatches(data.read(), 5.0f) == 0,
                  "elements that are not 1 * 2 + 3: was the work done in the primary context, not the stream's?");
  }
}

EXERCISE("kernel-through-driver", "The framework's kernel launched with cuLaunchKernel, in any context",
         "cudaGetKernel(&kernel, addOneEntry()) gives the kernel's cudaKernel_t, a context-independent CUkernel: "
         "cast to CUfunction, cuLaunchKernel runs it in the context of the stream it is given, loading it there "
         "first if needed. The cudaFunction_t of cudaGetFuncBySymbol is a CUfunction of the context current at the "
         "lookup: kept, and launched in another context, it is refused. Arguments: void* args[] = {&data, &n}, "
         "in (n + 255) / 256 blocks of 256 threads.") {
  TEST_CASE("add_one through cuLaunchKernel adds one to each of n elements, in the stream's order, and returns before it has run") {
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

  TEST_CASE("add_one through cuLaunchKernel works in the primary context, and then in a context the application created") {
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
    CHECK_MESSAGE(wb::mismatches(inPrimary, 1.0f) == 0, "in the primary context, elements that are not 0 + 1");
    CHECK_MESSAGE(wb::mismatches(data.read(), 6.0f) == 0, "in the created context, elements that are not 5 + 1");
  }
}
