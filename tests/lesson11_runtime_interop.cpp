// Lesson 11's claims: the runtime uses the primary context (or a context the driver made current),
// pointers cross between the APIs, a new thread fails in the driver until the runtime makes the
// primary context current, a runtime kernel can be launched from the driver, a library that pushes
// and pops leaves its caller's context current, and cudaDeviceReset destroys the driver's
// allocations in the primary context without releasing the driver's retain.
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
  TEST_CASE("a library that pushes its context and pops it leaves the caller's context current") {
    wbt::initDriver();
    rt(cudaSetDevice(0));
    rt(cudaFree(nullptr));
    const CUcontext callers = wbt::current();
    REQUIRE(callers != nullptr);
    CUcontext libraries = nullptr;
    {
      wbt::OwnedContext own(wbt::device(0));
      libraries = own.get();
      CUcontext popped = nullptr;
      CU_CHECK(cuCtxPopCurrent(&popped));
      {
        wbt::Pushed scope(libraries);
        CHECK(wbt::current() == libraries);
        wbt::DeviceBuffer work(4096);
        CHECK(ownerOf(reinterpret_cast<void*>(work.get())) == libraries);
      }
      CHECK(wbt::current() == callers);
    }
  }
}

// Named "reclaim": cudaDeviceReset takes back an allocation the driver made, which the sanitize
// target's leak check would count as a leak by definition.
TEST_SUITE("reclaim") {
  TEST_CASE("cudaDeviceReset destroys the driver's allocations in the primary context, and the driver's retain must still be released") {
    wbt::initDriver();
    const CUdevice dev = wbt::device(0);
    CUcontext primary = nullptr;
    REQUIRE(cuDevicePrimaryCtxRetain(&primary, dev) == CUDA_SUCCESS);
    CU_CHECK(cuCtxSetCurrent(primary));
    CUdeviceptr p = 0;
    REQUIRE(cuMemAlloc(&p, 1u << 20) == CUDA_SUCCESS);
    rt(cudaDeviceReset());
    CUdeviceptr base = 0;
    size_t size = 0;
    CHECK(cuMemGetAddressRange(&base, &size, p) != CUDA_SUCCESS);
    CHECK(cuDevicePrimaryCtxRelease(dev) == CUDA_SUCCESS);
  }
}
