// Wrong (R2): a library without cuInit is NoDriver, as if nothing had been found
//
// "No cuInit, no driver" merges two different faults: no file at all, and a file of that name that
// is something else (a broken link, another library copied over it). The task makes the second
// Unusable; the check's libm.so.6 case fails `math.cuda == ex00::Cuda::Unusable`.
#include "exercises.hpp"

#include <dlfcn.h>

#include <string>

namespace ex00 {

namespace {

// "cuInit(0) returned 34": the call and its code by number, which a log reader can look up.
std::string returned(const char* call, CUresult rc) {
  return std::string(call) + " returned " + std::to_string(static_cast<int>(rc));
}

}  // namespace

// The library is opened, not linked: a program linked to libcuda never reaches this code where
// there is none. dlsym by the exported names: cuInit and cuDeviceGetCount were never versioned,
// and taking them before cuInit needs no cuGetProcAddress. The library stays open: a driver whose
// cuInit succeeded is in use.
CudaVerdict cudaUsable(const std::string& library) {
  void* lib = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* why = dlerror();
    return {Cuda::NoDriver, library + " cannot be opened: " + (why ? why : "dlopen failed")};
  }
  using Init = CUresult(CUDAAPI*)(unsigned);
  using Count = CUresult(CUDAAPI*)(int*);
  const auto init = reinterpret_cast<Init>(dlsym(lib, "cuInit"));
  const auto count = reinterpret_cast<Count>(dlsym(lib, "cuDeviceGetCount"));
  if (!init || !count) return {Cuda::NoDriver, library + " has no cuInit or cuDeviceGetCount"};
  const CUresult rc = init(0);
  switch (rc) {
    case CUDA_SUCCESS: break;
    case CUDA_ERROR_STUB_LIBRARY: return {Cuda::StubDriver, returned("cuInit(0)", rc) + ": " + library + " is the toolkit's stub"};
    case CUDA_ERROR_NO_DEVICE: return {Cuda::NoDevice, returned("cuInit(0)", rc) + ": no CUDA device is visible"};
    case CUDA_ERROR_NOT_INITIALIZED:
      return {Cuda::ForkedAfterInit, returned("cuInit(0)", rc) + ": this process was forked after its parent's cuInit"};
    default: return {Cuda::Unusable, returned("cuInit(0)", rc)};
  }
  int devices = 0;
  const CUresult counted = count(&devices);
  if (counted != CUDA_SUCCESS) return {Cuda::Unusable, returned("cuDeviceGetCount", counted)};
  if (devices == 0) return {Cuda::NoDevice, "cuInit(0) succeeded, and the driver counts no device"};
  return {Cuda::Usable, std::to_string(devices) + " CUDA device" + (devices == 1 ? "" : "s") + " through " + library};
}

}  // namespace ex00
