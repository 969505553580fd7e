// Lesson 11: the CUDA runtime beside the driver.
//
// What you learn: libraries and frameworks mix the runtime (cuda_runtime.h, cudart) with the
// Driver API, and most interop bugs come from not knowing which context each side uses. The
// runtime is built on the driver's primary context: after cudaSetDevice the current context is the
// handle cuDevicePrimaryCtxRetain returns. A context the driver made current is the one the
// runtime uses: cudaMalloc allocates in it, until runtime code calls cudaSetDevice, which replaces
// it (cuCtxSetCurrent). Pointers cross both ways. A new thread has no current context, so the
// driver fails there while the runtime makes a primary context current on first use. A kernel
// launched the runtime's way has a CUfunction and a CUkernel the driver can use, and the runtime
// hands out driver entry points. Libraries retain the primary context, push and pop it, and never
// leave it set. cudaDeviceReset resets the primary context even while the driver holds a retain.
//
// This lesson alone links the CUDA runtime: that is its subject. Every other lesson is driver-only.
//
// APIs: cudaSetDevice, cudaFree, cudaMalloc, cudaMemcpy, cudaDeviceReset, cudaGetFuncBySymbol,
//       cudaGetKernel, cudaGetDriverEntryPointByVersion, cuDevicePrimaryCtxRetain, cuCtxGetCurrent,
//       cuPointerGetAttribute, cuCtxPushCurrent, cuCtxPopCurrent, cuLaunchKernel, cuKernelGetFunction
// Run:  ctest -R lesson11   (or build/lessons/lesson11-runtime-interop)
#include "process.hpp"
#include "runtime_kernel.hpp"
#include "workbook.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

// The runtime's errors, checked: a cudaError_t is not a CUresult, so it gets its own exception,
// with the runtime's own name and description.
struct RuntimeError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void rtCheck(cudaError_t rc, const char* what) {
  if (rc != cudaSuccess)
    throw RuntimeError(std::string(what) + " failed: " + cudaGetErrorName(rc) + " (" + std::to_string(rc) +
                       "): " + cudaGetErrorString(rc));
}

std::string same(const void* a, const void* b) { return a == b ? "the same handle" : "DIFFERENT handles"; }

CUcontext current() {
  CUcontext ctx = nullptr;
  CU_CHECK(cuCtxGetCurrent(&ctx));
  return ctx;
}

CUcontext ownerOf(CUdeviceptr p) {
  CUcontext ctx = nullptr;
  CU_CHECK(cuPointerGetAttribute(&ctx, CU_POINTER_ATTRIBUTE_CONTEXT, p));
  return ctx;
}

//! [primary]
// The runtime's context is the device's primary context, and cudaSetDevice makes it current.
void runtimeUsesPrimary(CUdevice dev) {
  std::printf("before any runtime call, the current context: %s\n", current() ? "set" : "none");
  wb::expect(current() == nullptr, "no current context before the runtime's first call", "one was current");
  rtCheck(cudaSetDevice(0), "cudaSetDevice(0)");
  rtCheck(cudaFree(nullptr), "cudaFree(0)");  // the classic way to make the runtime initialise
  CUcontext primary = nullptr;
  CU_CHECK(cuDevicePrimaryCtxRetain(&primary, dev));
  std::printf("after cudaSetDevice(0): current context %s, primary context %s: %s\n",
              wb::hex(current()).c_str(), wb::hex(primary).c_str(), same(current(), primary).c_str());
  wb::expect(current() == primary, "the runtime's context being the primary context", "another context");
  CU_CHECK(cuDevicePrimaryCtxRelease(dev));
}
//! [primary]

//! [driver-context]
// A context made current by the driver is the one the runtime uses: cudaMalloc allocates in it.
void runtimeUsesCurrent(CUdevice dev) {
  CUcontext mine = nullptr;
  CU_CHECK(wb::createContext(&mine, 0, dev));  // created and pushed: current
  void* p = nullptr;
  rtCheck(cudaMalloc(&p, 4096), "cudaMalloc");
  const bool inMine = ownerOf(reinterpret_cast<CUdeviceptr>(p)) == mine;
  std::printf("with a created context current, cudaMalloc's memory belongs to: %s\n",
              inMine ? "the created context" : "ANOTHER context");
  wb::expect(inMine, "cudaMalloc allocating in the driver's current context", "it allocated in another");
  rtCheck(cudaFree(p), "cudaFree");
  CU_CHECK(cuCtxDestroy(mine));  // popped too: the primary context is current again
  std::printf("after cuCtxDestroy, the current context is the primary context again: %s\n",
              current() ? "yes" : "no, none");
  wb::expect(current() != nullptr, "the primary context current again after cuCtxDestroy",
             "no context is current");
}
//! [driver-context]

//! [set-device-replaces]
// cudaSetDevice makes the primary context current "by calling cuCtxSetCurrent()" (the runtime's
// section on interactions with the driver), and cuCtxSetCurrent replaces the top of the thread's
// context stack. Runtime code that calls it inside a driver library's push and pop takes the
// library's context away: the rest of the scope runs in the primary context, and the library's pop
// pops the primary.
void setDeviceReplaces(CUdevice dev) {
  CUcontext primary = nullptr, mine = nullptr, popped = nullptr;
  CU_CHECK(cuDevicePrimaryCtxRetain(&primary, dev));
  CU_CHECK(wb::createContext(&mine, 0, dev));  // pushed, as a library's scope would
  rtCheck(cudaSetDevice(0), "cudaSetDevice(0)");  // runtime code called inside that scope
  const bool replaced = current() == primary;
  CU_CHECK(cuCtxPopCurrent(&popped));  // the library's pop at the end of its scope
  std::printf("a created context pushed, then cudaSetDevice(0): current is the %s; "
              "the library's pop took the %s\n", replaced ? "primary context" : "created context",
              popped == primary ? "primary context" : "created context");
  wb::expect(replaced && popped == primary,
             "cudaSetDevice replacing the pushed context with the primary context",
             "the created context stayed current");
  CU_CHECK(cuCtxDestroy(mine));  // no longer on any thread's stack
  CU_CHECK(cuDevicePrimaryCtxRelease(dev));
}
//! [set-device-replaces]

//! [pointers]
// One address space, one allocation: each API copies into the other's memory.
void pointersCross() {
  const std::vector<float> ones(1024, 1.0f);
  std::vector<float> back(1024, 0.0f);
  void* fromRuntime = nullptr;
  rtCheck(cudaMalloc(&fromRuntime, 4096), "cudaMalloc");
  CU_CHECK(cuMemcpyHtoD(reinterpret_cast<CUdeviceptr>(fromRuntime), ones.data(), 4096));
  CUdeviceptr fromDriver = 0;
  CU_CHECK(cuMemAlloc(&fromDriver, 4096));
  rtCheck(cudaMemcpy(reinterpret_cast<void*>(fromDriver), fromRuntime, 4096, cudaMemcpyDeviceToDevice),
          "cudaMemcpy");
  rtCheck(cudaMemcpy(back.data(), reinterpret_cast<void*>(fromDriver), 4096, cudaMemcpyDeviceToHost),
          "cudaMemcpy");
  std::printf("cuMemcpyHtoD into cudaMalloc memory, cudaMemcpy into cuMemAlloc memory and back: %s\n",
              back == ones ? "every value arrived" : "WRONG values");
  wb::expect(back == ones, "every value crossing between the two APIs' allocations", "wrong values");
  CU_CHECK(cuMemFree(fromDriver));
  rtCheck(cudaFree(fromRuntime), "cudaFree");
}
//! [pointers]

//! [threads]
// A new thread has no current context. The driver fails there; the runtime makes a device's
// primary context current on its first call, and from then on the driver works in that thread too.
// Which device: the runtime's device is per thread, and this thread never called cudaSetDevice.
void newThread() {
  bool asExplained = false;
  std::thread([&asExplained] {
    CUdeviceptr p = 0;
    const CUresult driverFirst = cuMemAlloc(&p, 4096);
    void* q = nullptr;
    const cudaError_t runtime = cudaMalloc(&q, 4096);
    CUcontext now = nullptr;
    cuCtxGetCurrent(&now);
    const CUresult driverAfter = cuMemAlloc(&p, 4096);
    std::printf("in a new thread: cuMemAlloc %s; cudaMalloc %s; "
                "then the current context is %s and cuMemAlloc %s\n",
                wb::errorName(driverFirst).c_str(), cudaGetErrorName(runtime), now ? "set" : "none",
                wb::errorName(driverAfter).c_str());
    if (driverAfter == CUDA_SUCCESS) cuMemFree(p);
    if (runtime == cudaSuccess) cudaFree(q);
    asExplained = driverFirst != CUDA_SUCCESS && runtime == cudaSuccess && now && driverAfter == CUDA_SUCCESS;
  }).join();
  wb::expect(asExplained, "the driver failing and the runtime succeeding in a new thread, then both working",
             "see the line above");
}
//! [threads]

//! [kernels]
// A kernel compiled into the program and launched with <<<>>>, reached from the driver: its
// CUfunction (cudaGetFuncBySymbol) launched with cuLaunchKernel, and its CUkernel (cudaGetKernel).
void kernelsBothWays() {
  float* data = nullptr;
  unsigned n = 1u << 16;
  rtCheck(cudaMalloc(&data, n * sizeof(float)), "cudaMalloc");
  rtCheck(cudaMemset(data, 0, n * sizeof(float)), "cudaMemset");
  rtCheck(launchAddOne(data, n, nullptr), "add_one<<<...>>>");  // the runtime's launch: +1
  cudaFunction_t asFunction = nullptr;
  rtCheck(cudaGetFuncBySymbol(&asFunction, addOneEntry()), "cudaGetFuncBySymbol");
  void* args[] = {&data, &n};
  CU_CHECK(cuLaunchKernel(reinterpret_cast<CUfunction>(asFunction), (n + 255) / 256, 1, 1, 256, 1, 1, 0,
                          nullptr, args, nullptr));  // the driver's launch of the same kernel: +1
  cudaKernel_t asKernel = nullptr;
  rtCheck(cudaGetKernel(&asKernel, addOneEntry()), "cudaGetKernel");
  CUfunction fromKernel = nullptr;
  CU_CHECK(cuKernelGetFunction(&fromKernel, reinterpret_cast<CUkernel>(asKernel)));
  CU_CHECK(cuLaunchKernel(fromKernel, (n + 255) / 256, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr));  // +1
  std::vector<float> back(n);
  rtCheck(cudaMemcpy(back.data(), data, n * sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy");
  const bool allThree = std::all_of(back.begin(), back.end(), [](float v) { return v == 3.0f; });
  std::printf("add_one launched by <<<>>>, by its CUfunction and by its CUkernel: "
              "every element is %.1f (3.0 expected)\n", back[0]);
  wb::expect(allThree, "every element 3.0 after the three launches", "some element is not 3.0");
  rtCheck(cudaFree(data), "cudaFree");
}
//! [kernels]

//! [entry-point]
// The runtime hands out driver entry points too, by name and CUDA version (CUDA 12.5 and newer).
void entryPointFromRuntime() {
#if CUDART_VERSION >= 12050
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult status = cudaDriverEntryPointSuccess;
  rtCheck(cudaGetDriverEntryPointByVersion("cuDriverGetVersion", &fn, 12000, cudaEnableDefault, &status),
          "cudaGetDriverEntryPointByVersion");
  int version = 0;
  if (fn) reinterpret_cast<CUresult(CUDAAPI*)(int*)>(fn)(&version);
  std::printf("cudaGetDriverEntryPointByVersion(\"cuDriverGetVersion\", 12000): %s; it says %d\n",
              status == cudaDriverEntryPointSuccess ? "found" : "not found", version);
  wb::expect(status == cudaDriverEntryPointSuccess && version > 0,
             "the driver's entry point found through the runtime",
             "not found, or it returned no version");
#else
  std::printf("cudaGetDriverEntryPointByVersion needs CUDA 12.5; this was built with %d.%d\n",
              CUDART_VERSION / 1000, CUDART_VERSION % 1000 / 10);
#endif
}
//! [entry-point]

//! [library-manners]
// What a library on the Driver API owes its caller: it works in the device's primary context (the
// runtime's own: the reference strongly discourages more than one context per device in a
// process), retained for the call, pushed on entry and popped on exit, so whatever the caller had
// current is current again afterwards, whatever happened in between.
class ContextScope {
 public:
  explicit ContextScope(CUcontext ctx) { CU_CHECK(cuCtxPushCurrent(ctx)); }
  ~ContextScope() {
    CUcontext popped = nullptr;
    cuCtxPopCurrent(&popped);
  }
  ContextScope(const ContextScope&) = delete;
  ContextScope& operator=(const ContextScope&) = delete;
};

void libraryCall(CUdevice dev) {
  CUcontext primary = nullptr;
  CU_CHECK(cuDevicePrimaryCtxRetain(&primary, dev));
  {
    ContextScope scope(primary);
    CUdeviceptr p = 0;
    CU_CHECK(cuMemAlloc(&p, 4096));  // the library's work
    CU_CHECK(cuMemFree(p));
  }
  CU_CHECK(cuDevicePrimaryCtxRelease(dev));
}
//! [library-manners]

//! [library-manners-2]
// Called from a worker thread of the caller's, where nothing is current: nothing is current after.
void libraryManners(CUdevice dev) {
  bool noneBefore = false, noneAfter = false;
  std::string failed;
  std::thread([&] {
    try {
      noneBefore = current() == nullptr;
      libraryCall(dev);
      noneAfter = current() == nullptr;
    } catch (const wb::DriverError& e) {
      failed = e.what();
    }
  }).join();
  std::printf("called from a worker thread with no context current: afterwards %s\n",
              !failed.empty() ? failed.c_str()
              : noneAfter ? "still none, as before" : "a context is LEFT current");
  wb::expect(failed.empty() && noneBefore && noneAfter,
             "the caller's state (no context) restored after the library's call",
             failed.empty() ? "a context was left current" : failed);
}
//! [library-manners-2]

//! [reset]
// cudaDeviceReset tears down the primary context at once, with the allocations in it, even while
// the driver holds a retain on it; the retain is still the driver's to release, and the next runtime
// call initialises the device again. It resets the device for the whole process, so it runs in a
// child process of its own (--child reset).
int deviceReset() {
  CU_CHECK(cuInit(0));
  CUdevice dev = 0;
  CU_CHECK(cuDeviceGet(&dev, 0));
  CUcontext primary = nullptr;
  CU_CHECK(cuDevicePrimaryCtxRetain(&primary, dev));
  CU_CHECK(cuCtxSetCurrent(primary));
  CUdeviceptr p = 0;
  CU_CHECK(cuMemAlloc(&p, 1u << 20));
  rtCheck(cudaDeviceReset(), "cudaDeviceReset");
  unsigned flags = 0;
  int active = 0;
  CU_CHECK(cuDevicePrimaryCtxGetState(dev, &flags, &active));
  // The reference calls passing p again undefined behaviour: printed as an illustration, never expected.
  CUdeviceptr base = 0;
  size_t size = 0;
  const CUresult range = cuMemGetAddressRange(&base, &size, p);
  std::printf("after cudaDeviceReset: primary context active = %d; "
              "the old allocation looked up (undefined): %s\n", active, wb::errorName(range).c_str());
  //! [reset]

  //! [reset-after]
  const CUresult released = cuDevicePrimaryCtxRelease(dev);
  std::printf("the driver's retain, released afterwards: %s\n", wb::errorName(released).c_str());
  wb::expect(active == 0 && released == CUDA_SUCCESS,
             "the primary context reset under the driver's retain, the retain still to release",
             "active = " + std::to_string(active) + ", release " + wb::errorName(released));
  const cudaError_t again = cudaFree(nullptr);
  std::printf("the next runtime call (cudaFree(0)): %s\n", cudaGetErrorName(again));
  wb::expect(again == cudaSuccess, "the next runtime call initialising the device again",
             cudaGetErrorName(again));
  return wb::kExitOk;
  //! [reset-after]
}

int main(int argc, char** argv) {
  try {
    if (argc == 3 && std::string(argv[1]) == "--child" && std::string(argv[2]) == "reset") return deviceReset();
    wb::checkEnvironment({});  // no variable changes what this lesson shows (device choice and the driver's log are noted)
    CU_CHECK(cuInit(0));  // first, so a machine without a driver hears why from the driver
    CUdevice dev = 0;
    CU_CHECK(cuDeviceGet(&dev, 0));
    wb::step(1, "The runtime's context is the primary context");
    runtimeUsesPrimary(dev);
    wb::step(2, "A context the driver made current");
    runtimeUsesCurrent(dev);
    setDeviceReplaces(dev);
    wb::step(3, "Pointers cross");
    pointersCross();
    wb::step(4, "A new thread");
    newThread();
    wb::step(5, "Kernels both ways");
    kernelsBothWays();
    entryPointFromRuntime();
    wb::step(6, "Libraries push and pop");
    libraryManners(dev);
    wb::step(7, "cudaDeviceReset under a driver retain");
    const wb::ProcessEnd child = wb::runProcess({wb::selfPath(), "--child", "reset"}, {}, 60);
    std::printf("%s(the child process %s)\n", child.output.c_str(),
                child.code == 0 ? "exited cleanly" : "FAILED");
    wb::expect(child.code == 0, "the reset child ending cleanly", "it ended with code " + std::to_string(child.code));
    return wb::kExitOk;
  } catch (const RuntimeError& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "error: %s\nThe CUDA runtime call above failed; its name and description say why.\n", e.what());
    return wb::kExitDriverError;
  } catch (...) {
    return wb::reportFatal(std::current_exception());
  }
}
