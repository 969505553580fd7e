// Lesson 11's claims: the runtime uses the primary context (or a context the driver made current,
// until cudaSetDevice replaces it), pointers cross between the APIs, a new thread fails in the
// driver until the runtime makes the primary context current, the runtime's device is per thread, a
// runtime kernel can be launched from the driver, a library that retains, pushes and pops the
// primary context leaves its caller's state as it was, and cudaDeviceReset resets the primary
// context without releasing the driver's retain, the next runtime call initialising it again.
#include "runtime_kernel.hpp"
#include "support.hpp"

#include <cuda_runtime.h>

#include <thread>

namespace {

void rt(cudaError_t rc) { REQUIRE_MESSAGE(rc == cudaSuccess, cudaGetErrorName(rc)); }

CUcontext ownerOf(const void* p) {
  CUcontext ctx = nullptr;
  CU_CHECK(cuPointerGetAttribute(&ctx, CU_POINTER_ATTRIBUTE_CONTEXT, reinterpret_cast<CUdeviceptr>(p)));
  return ctx;
}

}  // namespace

TEST_SUITE("primary") {
  TEST_CASE("after cudaSetDevice the current context is the primary context, the handle cuDevicePrimaryCtxRetain returns") {
    wbt::initDriver();
    REQUIRE(wbt::current() == nullptr);
    rt(cudaSetDevice(0));
    rt(cudaFree(nullptr));
    wbt::RetainedPrimary primary(wbt::device(0));
    CHECK(wbt::current() == primary.get());
    void* p = nullptr;
    rt(cudaMalloc(&p, 4096));
    CHECK(ownerOf(p) == primary.get());
    rt(cudaFree(p));
  }
}

TEST_SUITE("current-context") {
  TEST_CASE("with a context the driver made current, cudaMalloc allocates in that context") {
    wbt::initDriver();
    wbt::OwnedContext mine(wbt::device(0));  // created and pushed
    void* p = nullptr;
    rt(cudaMalloc(&p, 4096));
    CHECK(ownerOf(p) == mine.get());
    rt(cudaFree(p));
  }

  // The runtime's section on interactions with the driver: cudaSetDevice makes the primary context
  // current "by calling cuCtxSetCurrent()"; cuCtxSetCurrent replaces the top of the thread's stack.
  TEST_CASE("cudaSetDevice replaces a pushed context at the top of the stack with the primary context") {
    wbt::initDriver();
    wbt::RetainedPrimary primary(wbt::device(0));
    const CUcontext below = wbt::current();
    wbt::OwnedContext mine(wbt::device(0));  // created and pushed
    REQUIRE(wbt::current() == mine.get());
    rt(cudaSetDevice(0));
    CHECK(wbt::current() == primary.get());
    CUcontext popped = nullptr;
    CU_CHECK(cuCtxPopCurrent(&popped));
    CHECK(popped == primary.get());  // a library's pop takes the primary, not its own context
    CHECK(wbt::current() == below);
  }
}

TEST_SUITE("pointers") {
  TEST_CASE("cudaMalloc memory works with cuMemcpy, and cuMemAlloc memory with cudaMemcpy") {
    wbt::initDriver();
    rt(cudaSetDevice(0));
    rt(cudaFree(nullptr));
    const std::vector<float> ones(1024, 1.0f);
    std::vector<float> back(1024, 0.0f);
    void* fromRuntime = nullptr;
    rt(cudaMalloc(&fromRuntime, 4096));
    CHECK(cuMemcpyHtoD(reinterpret_cast<CUdeviceptr>(fromRuntime), ones.data(), 4096) == CUDA_SUCCESS);
    wbt::DeviceBuffer fromDriver(4096);
    rt(cudaMemcpy(reinterpret_cast<void*>(fromDriver.get()), fromRuntime, 4096, cudaMemcpyDeviceToDevice));
    rt(cudaMemcpy(back.data(), reinterpret_cast<void*>(fromDriver.get()), 4096, cudaMemcpyDeviceToHost));
    CHECK(back == ones);
    rt(cudaFree(fromRuntime));
  }
}

TEST_SUITE("threads") {
  TEST_CASE("in a new thread the driver has no context (CUDA_ERROR_INVALID_CONTEXT) until the runtime makes the primary context current") {
    wbt::initDriver();
    wbt::RetainedPrimary primary(wbt::device(0));
    CUresult before = CUDA_SUCCESS, after = CUDA_ERROR_UNKNOWN;
    cudaError_t runtime = cudaErrorUnknown;
    CUcontext then = nullptr;
    std::thread([&] {
      CUdeviceptr p = 0;
      before = cuMemAlloc(&p, 4096);
      void* q = nullptr;
      runtime = cudaMalloc(&q, 4096);
      cuCtxGetCurrent(&then);
      after = cuMemAlloc(&p, 4096);
      if (after == CUDA_SUCCESS) cuMemFree(p);
      if (runtime == cudaSuccess) cudaFree(q);
    }).join();
    CHECK(before == CUDA_ERROR_INVALID_CONTEXT);
    CHECK(runtime == cudaSuccess);
    CHECK(then == primary.get());
    CHECK(after == CUDA_SUCCESS);
  }
}

TEST_SUITE("kernels") {
  TEST_CASE("a kernel launched with <<<>>> is launched by the driver through cudaGetFuncBySymbol and cudaGetKernel") {
    wbt::initDriver();
    rt(cudaSetDevice(0));
    rt(cudaFree(nullptr));
    unsigned n = 4096;
    float* data = nullptr;
    rt(cudaMalloc(&data, n * sizeof(float)));
    rt(cudaMemset(data, 0, n * sizeof(float)));
    rt(launchAddOne(data, n, nullptr));
    cudaFunction_t function = nullptr;
    rt(cudaGetFuncBySymbol(&function, addOneEntry()));
    void* args[] = {&data, &n};
    CHECK(cuLaunchKernel(reinterpret_cast<CUfunction>(function), n / 256, 1, 1, 256, 1, 1, 0, nullptr, args,
                         nullptr) == CUDA_SUCCESS);
    cudaKernel_t kernel = nullptr;
    rt(cudaGetKernel(&kernel, addOneEntry()));
    CUfunction fromKernel = nullptr;
    CHECK(cuKernelGetFunction(&fromKernel, reinterpret_cast<CUkernel>(kernel)) == CUDA_SUCCESS);
    CHECK(cuLaunchKernel(fromKernel, n / 256, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr) == CUDA_SUCCESS);
    std::vector<float> back(n);
    rt(cudaMemcpy(back.data(), data, n * sizeof(float), cudaMemcpyDeviceToHost));
    CHECK(wb::mismatches(back, 3.0f) == 0);
    rt(cudaFree(data));
  }

#if CUDART_VERSION >= 12050
  TEST_CASE("cudaGetDriverEntryPointByVersion returns a driver function that works") {
    wbt::initDriver();
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult status = cudaDriverEntryPointSymbolNotFound;
    rt(cudaGetDriverEntryPointByVersion("cuDriverGetVersion", &fn, 12000, cudaEnableDefault, &status));
    CHECK(status == cudaDriverEntryPointSuccess);
    REQUIRE(fn != nullptr);
    int viaRuntime = 0, direct = 0;
    CHECK(reinterpret_cast<CUresult(CUDAAPI*)(int*)>(fn)(&viaRuntime) == CUDA_SUCCESS);
    CU_CHECK(cuDriverGetVersion(&direct));
    CHECK(viaRuntime == direct);
  }
#endif
}

TEST_SUITE("manners") {
  TEST_CASE("a library that retains the primary context, pushes and pops it leaves its caller's state as it was") {
    wbt::initDriver();
    CUcontext before = reinterpret_cast<CUcontext>(1), during = nullptr, owner = nullptr, after = reinterpret_cast<CUcontext>(1),
              primaryHandle = nullptr;
    std::string failed;
    std::thread([&] {  // a worker thread of the caller's: nothing current
      try {
        before = wbt::current();
        wbt::RetainedPrimary primary(wbt::device(0));
        primaryHandle = primary.get();
        {
          wbt::Pushed scope(primary.get());
          during = wbt::current();
          wbt::DeviceBuffer work(4096);
          owner = ownerOf(reinterpret_cast<void*>(work.get()));
        }
        after = wbt::current();
      } catch (const std::exception& e) {  // a failed call in this thread: reported below, not std::terminate
        failed = e.what();
      }
    }).join();
    CHECK_MESSAGE(failed.empty(), failed);
    CHECK(before == nullptr);
    CHECK(during == primaryHandle);
    CHECK(owner == primaryHandle);
    CHECK(after == nullptr);
  }

  TEST_CASE("called where the caller has another context current, the library leaves that context current") {
    wbt::initDriver();
    wbt::OwnedContext callers(wbt::device(0));  // the caller's own context (created and pushed)
    {
      wbt::RetainedPrimary primary(wbt::device(0));
      wbt::Pushed scope(primary.get());
      CHECK(wbt::current() == primary.get());
    }
    CHECK(wbt::current() == callers.get());
  }
}

// The runtime's device belongs to the calling thread (cudaSetDevice: "Sets device as the current
// device for the calling host thread"): a thread that never called it does not follow another
// thread's choice. Which device it does get is reported.
TEST_SUITE("multi-device") {
  TEST_CASE("cudaSetDevice(1) in one thread does not choose the device of another thread's runtime calls") {
    const int count = wbt::initDriver();
    REQUIRE(count >= 2);
    rt(cudaSetDevice(1));
    int mainDevice = -1, workerImplicit = -1, workerChosen = -1;
    rt(cudaGetDevice(&mainDevice));
    cudaError_t implicitRc = cudaErrorUnknown, chosenRc = cudaErrorUnknown;
    std::thread([&] {  // runtime calls only (they return codes), and the pointer queries' codes are not needed
      void* p = nullptr;
      implicitRc = cudaMalloc(&p, 4096);
      if (implicitRc == cudaSuccess) {
        cuPointerGetAttribute(&workerImplicit, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, reinterpret_cast<CUdeviceptr>(p));
        cudaFree(p);
      }
      chosenRc = cudaSetDevice(1);
      if (chosenRc == cudaSuccess) chosenRc = cudaMalloc(&p, 4096);
      if (chosenRc == cudaSuccess) {
        cuPointerGetAttribute(&workerChosen, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, reinterpret_cast<CUdeviceptr>(p));
        cudaFree(p);
      }
    }).join();
    CHECK(mainDevice == 1);
    CHECK(implicitRc == cudaSuccess);
    MESSAGE("observed: a new thread's first cudaMalloc landed on device " << workerImplicit);
    CHECK(chosenRc == cudaSuccess);
    CHECK(workerChosen == 1);  // once the thread chose for itself
    rt(cudaSetDevice(0));
  }
}

// Named "reclaim": cudaDeviceReset takes back an allocation the driver made, which the sanitize
// target's leak check would count as a leak by definition. The reference makes passing that
// allocation to any later call undefined behaviour, so the reset is seen through the primary
// context's state, never through the old pointer.
TEST_SUITE("reclaim") {
  TEST_CASE("cudaDeviceReset resets the primary context under a driver retain, which must still be released, and the next runtime call initialises it again") {
    wbt::initDriver();
    const CUdevice dev = wbt::device(0);
    CUcontext primary = nullptr;
    REQUIRE(cuDevicePrimaryCtxRetain(&primary, dev) == CUDA_SUCCESS);
    CU_CHECK(cuCtxSetCurrent(primary));
    CUdeviceptr p = 0;
    REQUIRE(cuMemAlloc(&p, 1u << 20) == CUDA_SUCCESS);
    unsigned flags = 0;
    int active = 0;
    CU_CHECK(cuDevicePrimaryCtxGetState(dev, &flags, &active));
    REQUIRE(active == 1);
    rt(cudaDeviceReset());
    CU_CHECK(cuDevicePrimaryCtxGetState(dev, &flags, &active));
    CHECK(active == 0);
    CHECK(cuDevicePrimaryCtxRelease(dev) == CUDA_SUCCESS);
    CHECK(cudaFree(nullptr) == cudaSuccess);  // "Any subsequent API call to this device will reinitialize the device"
    CU_CHECK(cuDevicePrimaryCtxGetState(dev, &flags, &active));
    CHECK(active == 1);
  }
}
